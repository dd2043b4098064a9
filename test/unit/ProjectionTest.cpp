//===- ProjectionTest.cpp - mesh axes onto factors, sub-axes --------------===//
//
// tessel/sharding/Projection.h (used by propagation and partitioning) and
// the sub-axis arithmetic of tessel/support/Mesh.h.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/Projection.h"
#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/support/Mesh.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// A module holding `tessel.mesh @m [...]` and its mesh op.
class ProjectionTest : public ::testing::Test {
protected:
  void SetUp() override { ctx.loadDialect<TesselDialect>(); }
  MeshOp mesh(StringRef axes) {
    module = parseSourceString<ModuleOp>(
        ("tessel.mesh @m [" + axes + "]").str(), &ctx);
    return cast<MeshOp>(module->getBody()->front());
  }
  AxisList axes(std::initializer_list<StringRef> names) {
    AxisList l;
    for (StringRef n : names)
      l.push_back(StringAttr::get(&ctx, n));
    return l;
  }
  static std::string str(ArrayRef<AxisList> lists) {
    std::string s;
    for (auto [i, l] : llvm::enumerate(lists))
      s += (i ? " | " : "") + formatAxes(l);
    return s;
  }
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ProjectionTest, OneFactorTakesEveryAxisEvenUnevenly) {
  MeshOp m = mesh("\"dp\"=2, \"tp\"=3");
  EXPECT_EQ(str(splitAxesOverFactors(m, {7}, axes({"dp", "tp"}))),
            "{\"dp\", \"tp\"}");
}

TEST_F(ProjectionTest, WholeAxesGoMajorToMinor) {
  MeshOp m = mesh("\"dp\"=2, \"tp\"=4");
  EXPECT_EQ(str(splitAxesOverFactors(m, {2, 16}, axes({"dp", "tp"}))),
            "{\"dp\"} | {\"tp\"}");
  // The 4 fills the major factor; nothing is left for the minor one.
  EXPECT_EQ(str(splitAxesOverFactors(m, {4, 8}, axes({"tp", "dp"}))),
            "{\"tp\"} | {\"dp\"}");
}

TEST_F(ProjectionTest, AnAxisIsCutWhereAFactorEnds) {
  MeshOp m = mesh("\"tp\"=8");
  // Heads (2) x head size (8) from 16 columns on tp=8.
  EXPECT_EQ(str(splitAxesOverFactors(m, {2, 8}, axes({"tp"}))),
            "{\"tp\":(1)2} | {\"tp\":(2)4}");
  // A sub-axis is cut the same way.
  EXPECT_EQ(str(splitAxesOverFactors(m, {2, 2}, axes({"tp:(2)4"}))),
            "{\"tp\":(2)2} | {\"tp\":(4)2}");
  // Factors of 1 are skipped.
  EXPECT_EQ(str(splitAxesOverFactors(m, {1, 4, 4}, axes({"tp"}))),
            "{} | {\"tp\":(1)4} | {\"tp\":(4)2}");
}

TEST_F(ProjectionTest, APartlySplitFactorEndsTheSplit) {
  MeshOp m = mesh("\"a\"=4, \"b\"=2");
  // gcd(6, 4) = 2: the 6 takes "a":(1)2 and is left with 3, so neither the
  // rest of "a" nor "b" reaches the minor factor.
  EXPECT_EQ(str(splitAxesOverFactors(m, {6, 8}, axes({"a", "b"}))),
            "{\"a\":(1)2} | {}");
  // An axis sharing no factor with what is left ends it at once.
  MeshOp odd = mesh("\"c\"=3");
  EXPECT_EQ(str(splitAxesOverFactors(odd, {4, 3}, axes({"c"}))), "{} | {}");
}

TEST_F(ProjectionTest, JoinMergesSubAxesBack) {
  MeshOp m = mesh("\"tp\"=8, \"dp\"=2");
  SmallVector<AxisList> per = {axes({"tp:(1)2"}), axes({"tp:(2)4"})};
  EXPECT_EQ(formatAxes(joinFactorAxes(m, {2, 8}, per)), "{\"tp\"}");
  // A minor factor counts only once the major one is fully split.
  SmallVector<AxisList> partial = {axes({"tp:(1)2"}), axes({"dp"})};
  EXPECT_EQ(formatAxes(joinFactorAxes(m, {4, 8}, partial)), "{\"tp\":(1)2}");
  // An axis that does not divide a merged factor is not taken.
  SmallVector<AxisList> uneven = {axes({"dp"}), axes({"tp"})};
  EXPECT_EQ(formatAxes(joinFactorAxes(m, {3, 8}, uneven)), "{}");
  // One factor: uneven is fine.
  EXPECT_EQ(formatAxes(joinFactorAxes(m, {3}, {axes({"tp"})})), "{\"tp\"}");
}

TEST_F(ProjectionTest, CanonicalMergesOnlyContinuingSubAxes) {
  MeshOp m = mesh("\"x\"=8");
  EXPECT_EQ(formatAxes(canonicalAxes(m, axes({"x:(1)2", "x:(2)2"}))),
            "{\"x\":(1)4}");
  EXPECT_EQ(formatAxes(canonicalAxes(m, axes({"x:(1)2", "x:(2)4"}))),
            "{\"x\"}");
  EXPECT_EQ(formatAxes(canonicalAxes(m, axes({"x:(2)4", "x:(1)2"}))),
            "{\"x\":(2)4, \"x\":(1)2}");
}

TEST_F(ProjectionTest, Overlap) {
  mesh("\"x\"=8");
  EXPECT_TRUE(conflictsWithAny(axes({"x"})[0], axes({"x:(4)2"})));
  EXPECT_TRUE(conflictsWithAny(axes({"x:(1)4"})[0], axes({"x:(2)2"})));
  EXPECT_FALSE(conflictsWithAny(axes({"x:(1)2"})[0], axes({"x:(2)4", "y"})));
  // Disjoint but not nested: 6 cut as 2 x 3 and as 3 x 2.
  EXPECT_TRUE(::tessel::axesConflict("y:(1)2", "y:(3)2"));
  EXPECT_FALSE(::tessel::axesConflict("y:(1)2", "y:(2)3"));
  EXPECT_TRUE(::tessel::axesConflict("z:(2)2", "z:(6)2")); // 12: 2,4 vs 6
}

TEST(SubAxes, ParseAndPrint) {
  std::optional<::tessel::AxisRef> r = ::tessel::AxisRef::parse("tp:(2)4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "tp");
  EXPECT_EQ(r->pre, 2);
  EXPECT_EQ(r->size, 4);
  EXPECT_EQ(r->str(), "tp:(2)4");
  EXPECT_TRUE(::tessel::AxisRef::parse("tp")->isWhole());
  for (const char *bad : {"tp:", "tp:(0)2", "tp:(1)1", "tp:2", ":(1)2"})
    EXPECT_FALSE(::tessel::AxisRef::parse(bad)) << bad;
}

TEST(SubAxes, MeshGroups) {
  ::tessel::MeshShape mesh{{"x", "y"}, {4, 2}};
  EXPECT_EQ(mesh.axisSize("x:(1)2"), 2);
  EXPECT_EQ(mesh.axisSize("x:(2)4"), -1); // 8 does not divide 4
  // Device 5 is x=2 (binary 10), y=1: major digit 1, minor digit 0.
  EXPECT_EQ(mesh.coord(5, "x:(1)2"), 1);
  EXPECT_EQ(mesh.coord(5, "x:(2)2"), 0);
  // Its group over the minor half of x: x in {2, 3}, y = 1.
  EXPECT_EQ(mesh.group(5, {"x:(2)2"}), (std::vector<int64_t>{5, 7}));
  // Over (y, major half of x): x in {0, 2}, the minor x digit (0) kept.
  EXPECT_EQ(mesh.group(5, {"y", "x:(1)2"}), (std::vector<int64_t>{0, 4, 1, 5}));
  EXPECT_EQ(mesh.groupIndex(5, {"y", "x:(1)2"}), 3);
  // The two halves in order are the whole axis.
  for (int64_t d = 0; d < 8; ++d)
    EXPECT_EQ(mesh.group(d, {"x:(1)2", "x:(2)2"}), mesh.group(d, {"x"}));
}
} // namespace
