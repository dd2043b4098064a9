//===- RuntimeTest.cpp - libtessel_rt: communicators, layouts, checkpoints ===//

#include "CommScenarios.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/runtime/Communicator.h"
#include "tessel/runtime/PeakFlops.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <numeric>

using namespace tessel;
using namespace tessel::rt;

namespace {

/// Runs `scenario` on 4 ranks as threads; returns the failures.
std::vector<std::string> onThreads(scenarios::Scenario scenario) {
  std::mutex mutex;
  std::vector<std::string> failures;
  int rc = runThreadRanks(4, std::chrono::seconds(10), [&](Communicator &c) {
    scenario(c, [&, r = c.rank()](bool ok, const std::string &what) {
      if (ok)
        return;
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("rank " + std::to_string(r) + ": " + what);
    });
    return 0;
  });
  if (rc)
    failures.push_back("runThreadRanks returned " + std::to_string(rc));
  return failures;
}

TEST(PeakFlops, NamesAsTheDriverReportsThem) {
  using tessel::rt::gpuPeakFlops;
  using P = tessel::rt::MatmulPrecision;
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA H100 80GB HBM3", P::Half), 989.4e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA H100 80GB HBM3", P::TF32), 494.7e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA H100 PCIe", P::Half), 756.5e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA H100 NVL", P::F32), 60e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA H200", P::Half), 989.4e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA GH200 480GB", P::Half), 989.4e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA A100-SXM4-80GB", P::TF32), 156e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA A100 80GB PCIe", P::F32), 19.5e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA L40S", P::Half), 362.1e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA L40", P::Half), 181e12);
  EXPECT_DOUBLE_EQ(gpuPeakFlops("NVIDIA L4", P::Half), 121e12);
  EXPECT_EQ(gpuPeakFlops("Tesla T4", P::Half), 0);
}

TEST(ThreadCommunicator, Scenarios) {
  // test/unit/CommScenarios.h; tessel-comm-check runs them under MPI.
  for (auto &[name, scenario] : scenarios::all()) {
    std::vector<std::string> failures = onThreads(scenario);
    EXPECT_TRUE(failures.empty()) << name << ": " << failures.front();
  }
}

TEST(ThreadCommunicatorDeathTest, ReceiveWithoutSenderTimesOut) {
  EXPECT_EXIT(runThreadRanks(2, std::chrono::seconds(1),
                             [](Communicator &c) {
                               int x = 0;
                               if (c.rank() == 0)
                                 c.recv(&x, sizeof(x), 1, 0, c.world());
                               return 0;
                             }),
              testing::ExitedWithCode(1),
              "rank 0: a receive waited more than 1 s for its sender");
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

TEST(Checkpoint, ReadsTheShardsItsIndexNames) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-ckpt", dir));
  std::string temp = checkpointTempDir(dir, 4, "test");
  ASSERT_FALSE(bool(beginCheckpoint(dir, temp)));
  float a[2] = {1, 2}, b[3] = {3, 4, 5};
  RawTensor ta{"a", DType::F32, {2}, reinterpret_cast<uint8_t *>(a)};
  RawTensor tb{"b", DType::F32, {3}, reinterpret_cast<uint8_t *>(b)};
  EXPECT_EQ(shardFileName(0, 2), "model-00001-of-00002.safetensors");
  ASSERT_FALSE(bool(writeSafeTensors(temp + "/" + shardFileName(0, 2), {ta})));
  ASSERT_FALSE(bool(writeSafeTensors(temp + "/" + shardFileName(1, 2), {tb})));
  ASSERT_FALSE(bool(finishCheckpoint(
      dir, 4, temp,
      {{"a", shardFileName(0, 2)}, {"b", shardFileName(1, 2)}}, 20, "{}")));
  llvm::Expected<Checkpoint> c = readLatestCheckpoint(dir);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->step, 4);
  const SafeTensorsIndex::Entry *e = c->file.index.find("b");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(llvm::sys::path::filename(c->file.pathOf(*e)), shardFileName(1, 2));
  EXPECT_EQ(reinterpret_cast<const float *>(c->file.bytesOf(*e))[2], 5.0f);
  EXPECT_EQ(c->file.index.find("c"), nullptr);
  // An index naming a file outside the step's directory is refused.
  std::string index = (dir + "/step_00000004/model.safetensors.index.json").str();
  ASSERT_FALSE(bool(writeFileAtomically(
      index, R"({"weight_map": {"a": "../../etc/passwd"}})")));
  llvm::Expected<Checkpoint> bad = readLatestCheckpoint(dir);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("names no file beside the index"),
            std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
