//===- ShapeInferenceTest.cpp - result shapes of tessel ops ---------------===//

#include "tessel/dialects/tessel/ShapeInference.h"

#include "gtest/gtest.h"

using namespace mlir::tessel;
using Shape = shape::Shape;

namespace {
/// The shape, or the error message prefixed with "error: ".
std::string str(llvm::Expected<Shape> result) {
  if (!result)
    return "error: " + llvm::toString(result.takeError());
  std::string out;
  for (auto [i, d] : llvm::enumerate(*result))
    out += (i ? "x" : "") + std::to_string(d);
  return out;
}

TEST(ShapeInference, Transpose) {
  EXPECT_EQ(str(shape::transpose({2, 3, 4}, {2, 0, 1})), "4x2x3");
  EXPECT_EQ(str(shape::transpose({2, 3}, {0, 0})),
            "error: permutation [0, 0] lists dimension 0 twice");
  EXPECT_NE(str(shape::transpose({2, 3}, {0})).find("has 1 entries"),
            std::string::npos);
}

TEST(ShapeInference, SliceRoundsStridesUp) {
  EXPECT_EQ(str(shape::slice({4, 8}, {0, 2}, {4, 8}, {1, 2})), "4x3");
  EXPECT_EQ(str(shape::slice({4, 7}, {1, 0}, {4, 7}, {2, 3})), "2x3");
  EXPECT_EQ(str(shape::slice({4}, {2}, {2}, {1})), "0");
  EXPECT_NE(str(shape::slice({4}, {3}, {5}, {1})).find("dimension 0 (size 4)"),
            std::string::npos);
  EXPECT_NE(str(shape::slice({4}, {0}, {4}, {0})).find("stride 0"),
            std::string::npos);
}

TEST(ShapeInference, Concatenate) {
  llvm::SmallVector<int64_t> a = {4, 2}, b = {4, 6};
  EXPECT_EQ(str(shape::concatenate({a, b}, 1)), "4x8");
  EXPECT_NE(str(shape::concatenate({a, b}, 0)).find("dimension 1"),
            std::string::npos);
  EXPECT_NE(str(shape::concatenate({}, 0)).find("at least one"),
            std::string::npos);
}

TEST(ShapeInference, Pad) {
  EXPECT_EQ(str(shape::pad({4, 8}, {0, 1}, {2, 3})), "6x12");
  EXPECT_NE(str(shape::pad({4}, {-1}, {0})).find("negative"),
            std::string::npos);
}

TEST(ShapeInference, DotGeneralMatmulAndBatched) {
  EXPECT_EQ(str(shape::dotGeneral({4, 8}, {8, 16}, {}, {}, {1}, {0})), "4x16");
  // Attention scores: [b, h, s, d] x [b, h, t, d] -> [b, h, s, t].
  EXPECT_EQ(str(shape::dotGeneral({2, 3, 5, 8}, {2, 3, 7, 8}, {0, 1}, {0, 1},
                                  {3}, {3})),
            "2x3x5x7");
  // Free dims keep operand order: lhs free, then rhs free.
  EXPECT_EQ(str(shape::dotGeneral({8, 4}, {16, 8}, {}, {}, {0}, {1})),
            "4x16");
  EXPECT_NE(str(shape::dotGeneral({4, 8}, {9, 16}, {}, {}, {1}, {0}))
                .find("contracting dimension 1 of lhs (size 8) and 0 of rhs "
                      "(size 9)"),
            std::string::npos);
  EXPECT_NE(str(shape::dotGeneral({4, 8}, {8, 16}, {0}, {}, {1}, {0}))
                .find("differ in length"),
            std::string::npos);
  EXPECT_NE(str(shape::dotGeneral({4, 8}, {8, 16}, {}, {}, {1, 1}, {0, 1}))
                .find("twice"),
            std::string::npos);
}

TEST(ShapeInference, Reduce) {
  EXPECT_EQ(str(shape::reduce({2, 3, 4}, {0, 2})), "3");
  EXPECT_EQ(str(shape::reduce({2, 3}, {0, 1})), "");
  EXPECT_NE(str(shape::reduce({2, 3}, {1, 0})).find("strictly increasing"),
            std::string::npos);
  EXPECT_NE(str(shape::reduce({2, 3}, {})).find("empty"), std::string::npos);
}

TEST(ShapeInference, GatherIsNumpyTake) {
  EXPECT_EQ(str(shape::gather({256, 64}, {4, 16}, 0)), "4x16x64");
  EXPECT_EQ(str(shape::gather({3, 5, 7}, {2}, 1)), "3x2x7");
  EXPECT_NE(str(shape::gather({3}, {2}, 1)).find("axis 1"), std::string::npos);
}

TEST(ShapeInference, TopK) {
  EXPECT_EQ(str(shape::topK({64, 8}, 2)), "64x2");
  EXPECT_NE(str(shape::topK({64, 8}, 9)).find("k = 9"), std::string::npos);
  EXPECT_NE(str(shape::topK({}, 1)).find("rank"), std::string::npos);
}

TEST(ShapeInference, BroadcastInDim) {
  EXPECT_FALSE(static_cast<bool>(shape::checkBroadcastInDim({8}, {4, 8}, {1})));
  EXPECT_FALSE(static_cast<bool>(
      shape::checkBroadcastInDim({1, 8}, {4, 3, 8}, {0, 2})));
  auto message = [](llvm::Error err) {
    return err ? llvm::toString(std::move(err)) : std::string();
  };
  EXPECT_NE(message(shape::checkBroadcastInDim({8}, {4, 8}, {0}))
                .find("operand dimension 0 (size 8)"),
            std::string::npos);
  EXPECT_NE(message(shape::checkBroadcastInDim({4, 4}, {4, 4}, {1, 0}))
                .find("strictly increasing"),
            std::string::npos);
  EXPECT_NE(message(shape::checkBroadcastInDim({4}, {4}, {3}))
                .find("not a dimension"),
            std::string::npos);
}

TEST(ShapeInference, NumElementsDetectsOverflow) {
  EXPECT_EQ(shape::numElements({2, 3, 4}), 24);
  EXPECT_EQ(shape::numElements({}), 1);
  EXPECT_EQ(shape::numElements({int64_t(1) << 40, int64_t(1) << 40}), -1);
}
} // namespace
