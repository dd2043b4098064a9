//===- RuntimeTest.cpp - libtessel_rt: communicators, layouts, checkpoints ===//

#include "tessel/runtime/Checkpoint.h"
#include "tessel/runtime/Communicator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <mutex>
#include <numeric>

using namespace tessel;
using namespace tessel::rt;

namespace {

TEST(ThreadCommunicator, CollectivesOverGroups) {
  // 4 ranks as a 2 x 2 mesh; groups {0,1},{2,3} (axis 1) and everyone.
  std::mutex mutex;
  std::vector<std::string> failures;
  int rc = runThreadRanks(4, std::chrono::seconds(10), [&](Communicator &c) {
    int64_t r = c.rank();
    std::vector<int64_t> pair = {r / 2 * 2, r / 2 * 2 + 1};
    std::vector<int64_t> all = {0, 1, 2, 3};
    auto expect = [&](bool ok, const std::string &what) {
      if (!ok) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back("rank " + std::to_string(r) + ": " + what);
      }
    };
    float in[3] = {float(r), float(10 * r), 1.0f}, out[12];
    c.allReduce(in, out, 3, DType::F32, ReduceOp::Sum, pair);
    float base = float(pair[0] + pair[1]);
    expect(out[0] == base && out[1] == 10 * base && out[2] == 2,
           "all-reduce sum over the pair");
    c.allReduce(in, out, 3, DType::F32, ReduceOp::Max, all);
    expect(out[0] == 3 && out[1] == 30, "all-reduce max over all");
    c.allGather(in, out, sizeof(float), all);
    expect(out[0] == 0 && out[1] == 1 && out[2] == 2 && out[3] == 3,
           "all-gather in rank order");
    // All-to-all: block j of rank r is r*10+j; rank r receives j*10+r.
    float blocks[4], got[4];
    for (int j = 0; j < 4; ++j)
      blocks[j] = float(r * 10 + j);
    c.allToAll(blocks, got, sizeof(float), all);
    for (int j = 0; j < 4; ++j)
      expect(got[j] == float(j * 10 + r), "all-to-all block");
    // Permute: a ring 0->1->2->3->0, except that nobody sends to 0.
    float shifted = -1;
    c.permute(in, &shifted, sizeof(float), {0, 1, 1, 2, 2, 3}, all);
    expect(shifted == (r == 0 ? 0.0f : float(r - 1)), "permute");
    int64_t mine = 100 + r, gathered[4] = {0, 0, 0, 0};
    c.gatherToRoot(&mine, gathered, sizeof(int64_t));
    if (r == 0)
      expect(gathered[3] == 103 && gathered[1] == 101, "gather to root");
    c.barrier();
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(ThreadCommunicator, ReduceRoundsSixteenBitFloatsOnce) {
  uint16_t a[1], b[1];
  storeElement(DType::BF16, 1.0, 0, reinterpret_cast<uint8_t *>(a));
  storeElement(DType::BF16, 0.00390625, 0, reinterpret_cast<uint8_t *>(b));
  reduceInto(a, b, 1, DType::BF16, ReduceOp::Sum);
  double f;
  int64_t i;
  loadElement(DType::BF16, reinterpret_cast<uint8_t *>(a), f, i);
  EXPECT_EQ(f, 1.0); // 1 + 2^-8 rounds to 1 in bf16 (8 bits of mantissa)
}

TEST(Checkpoint, WritesAtomicallyAndReadsTheLatest) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-ckpt", dir));
  NamedTensors t;
  HostTensor x(DType::F32, {2});
  x.f = {1.5, -2};
  t.tensors.emplace_back("x", x);
  ASSERT_FALSE(bool(writeCheckpoint(dir, 3, t, "{}")));
  x.f = {7, 8};
  t.tensors[0].second = x;
  ASSERT_FALSE(bool(writeCheckpoint(dir, 6, t, "{}")));
  llvm::Expected<Checkpoint> c = readLatestCheckpoint(dir);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->step, 6);
  const SafeTensorsIndex::Entry *e = c->file.index.find("x");
  ASSERT_NE(e, nullptr);
  const float *x8 = reinterpret_cast<const float *>(c->file.bytesOf(*e));
  EXPECT_EQ(x8[0], 7.0f);
  EXPECT_EQ(x8[1], 8.0f);
  // No temporary directories or files are left behind.
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    EXPECT_EQ(llvm::sys::path::filename(it->path()).find(".tmp"),
              llvm::StringRef::npos)
        << it->path();
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
