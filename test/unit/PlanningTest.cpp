//===- PlanningTest.cpp - the cost model against known formulas -----------===//

#include "tessel/planning/CostModel.h"
#include "tessel/planning/PlanFile.h"
#include "tessel/planning/ProgramCosts.h"

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir::tessel::planning;

namespace {

/// Mixed-precision Adam as in the ZeRO paper: fp16 weights and gradients
/// (2 + 2 bytes), K = 12 bytes of fp32 master weights, momentum, variance.
ModelProfile mixedPrecision(double parameters) {
  ModelProfile m;
  m.parameters = parameters;
  m.perParameter = {2, 2, 12};
  m.layers = 80;
  return m;
}

double states(const Memory &m) { return m.weights + m.gradients + m.optimizer; }

TEST(Planning, SeventyBillionParametersNeedSixteenBytesEach) {
  ModelProfile m = mixedPrecision(70e9);
  DeviceLoad load;
  load.parameters = m.parameters;
  Plan one;
  EXPECT_NEAR(states(estimateMemory(m, load, one)), 1.12e12, 0.01 * 1.12e12);
}

// ZeRO (Rajbhandari et al. 2020), Figure 1: a 7.5B model on 64 devices:
// 120 GB, then 31.4 GB (P_os), 16.6 GB (P_os+g), 1.9 GB (P_os+g+p; the
// formula's 1.875 GB, rounded).
TEST(Planning, ZeroStagesMatchThePaper) {
  ModelProfile m = mixedPrecision(7.5e9);
  DeviceLoad load;
  load.parameters = m.parameters;
  load.layers = m.layers;
  const double expected[] = {120e9, 31.4e9, 16.6e9, 1.875e9};
  for (int zero = 0; zero <= 3; ++zero) {
    Plan p;
    p.dp = 64;
    p.zero = zero;
    double got = states(estimateMemory(m, load, p));
    EXPECT_NEAR(got, expected[zero], 0.01 * expected[zero]) << "ZeRO-" << zero;
  }
}

// Expert parallelism: a model of 1B dense and 8B expert parameters (64
// experts) on 16 data-parallel devices, the experts split over ep=8 of them:
// each device holds the dense 1B and 1/8 of the experts (2B in all); ZeRO
// shards over the 2 devices that hold the same experts (the mesh's dp
// axis), not over all 16.
TEST(Planning, ExpertParallelismSplitsTheExperts) {
  ModelProfile m = mixedPrecision(9e9);
  m.expertParameters = 8e9;
  m.experts = 64;
  m.moeLayers = 8;
  m.expertExchangeBytesPerSample = 1e6;
  DeviceLoad load;
  load.parameters = m.parameters;
  load.layers = m.layers;
  Plan p;
  p.dp = 16;
  p.ep = 8;
  EXPECT_NEAR(states(estimateMemory(m, load, p)), 2e9 * 16, 1e6);
  p.zero = 1; // 12 bytes of optimizer state over 2 devices
  EXPECT_NEAR(states(estimateMemory(m, load, p)), 2e9 * (4 + 6), 1e6);
  // The all-to-alls: 2 x exchange x (ep-1)/ep per sample, over the link.
  Hardware hw;
  hw.peakFlops["f32"] = 1e12;
  hw.efficiency = 1;
  hw.devicesPerNode = 8;
  hw.intraNode = {"nvlink", 1e9, 0};
  hw.interNode = {"ib", 1e8, 0};
  p.zero = 0;
  p.microBatchSize = 4;
  EXPECT_NEAR(estimateTime(m, load, p, hw).ep, 2 * 1e6 * 7 / 8 * 4 / 1e9,
              1e-12);
  // Every enumerated plan's ep divides its dp and the 64 experts; a model
  // without experts gets ep=1 only.
  SearchSpace space;
  space.devices = 16;
  space.globalBatch = 64;
  hw.devicesPerNode = 16;
  std::vector<Plan> plans = enumeratePlans(m, space, hw);
  bool sawEp = false;
  for (const Plan &q : plans) {
    EXPECT_EQ(q.dp % q.ep, 0);
    EXPECT_EQ(64 % q.ep, 0);
    sawEp |= q.ep == 16;
  }
  EXPECT_TRUE(sawEp);
  m.expertParameters = 0;
  m.experts = 0;
  for (const Plan &q : enumeratePlans(m, space, hw))
    EXPECT_EQ(q.ep, 1);
  // The plan compiles to the dp-ep strategy's mesh and rules.
  Plan e;
  e.dp = 8;
  e.ep = 4;
  CompileOptions o = compileOptions(e);
  EXPECT_EQ(o.mesh, "dp=2,ep=4,tp=1");
  EXPECT_NE(o.rules.find("\"expert\":\"ep\""), std::string::npos) << o.rules;
  EXPECT_NE(o.rules.find("\"batch\":[\"dp\",\"ep\"]"), std::string::npos)
      << o.rules;
}

TEST(Planning, PipelineBubbleAndActivationsFollowTheSchedules) {
  ModelProfile m = mixedPrecision(1e9);
  m.trainFlopsPerSample = 1e12;
  m.forwardFlopsPerSample = 1e12 / 3;
  m.keptBytesPerSample = 1e6;
  Hardware hw;
  hw.peakFlops["f32"] = 1e12;
  hw.efficiency = 1;
  hw.intraNode = hw.interNode = {"link", 1e30, 0};
  for (auto [schedule, share] :
       {std::pair{"1f1b", 1.0}, std::pair{"gpipe", 1.0},
        std::pair{"zb-h1", 1.0 / 3}}) {
    Plan p;
    p.pp = 4;
    p.microbatches = 8;
    p.schedule = schedule;
    DeviceLoad load = analyticLoad(m, p);
    StepTime t = estimateTime(m, load, p, hw);
    // 1F1B: the bubble is (p-1)/(m+p-1) of the step (Narayanan et al.).
    EXPECT_NEAR(t.bubble / t.compute, share * 3.0 / 8, 1e-12) << schedule;
    double inFlight = std::string(schedule) == "gpipe" ? 8 : 4;
    EXPECT_NEAR(estimateMemory(m, load, p).activations,
                inFlight * load.keptBytesPerSample, 1e-6)
        << schedule;
  }
  Plan p;
  p.pp = 4, p.microbatches = 8, p.schedule = "1f1b";
  DeviceLoad load = analyticLoad(m, p);
  StepTime t = estimateTime(m, load, p, hw);
  EXPECT_NEAR(t.bubble / t.total(), 3.0 / 11, 1e-12);

  // Four devices on two shared units: a device idle in the bubble lends
  // its unit to the stages with work, and units idle only while fewer than
  // two stages have any (the schedule's fill and drain). The simulation
  // finds a bubble of 1/16 of the busy time with 8 microbatches, 1/8 with
  // 4, 1/4 with 2 (separate devices: 3/8, 3/4, 3/2).
  hw.devicesPerNode = 4;
  hw.computeUnitsPerNode = 2;
  for (auto [microbatches, bubble] :
       {std::pair{8, 1.0 / 16}, std::pair{4, 1.0 / 8}, std::pair{2, 0.25}}) {
    p.microbatches = microbatches;
    StepTime shared = estimateTime(m, analyticLoad(m, p), p, hw);
    EXPECT_NEAR(shared.bubble / shared.compute, bubble, 1e-9)
        << microbatches;
  }
  // By hand: 2 stages on 1 unit, 2 microbatches of f = 1, b = 2 (9 on
  // separate devices): a stage alone runs at twice the all-busy rate, so
  // F0 (0.5), F1 | F0' (1), B0' (1), B0 | F1' (1), B0 | B1' (1), B1' (0.5),
  // B1 (1): 6, the busy time; no bubble.
  {
    Plan two;
    two.pp = 2, two.microbatches = 2, two.schedule = "1f1b";
    Hardware one = hw;
    one.devicesPerNode = 2, one.computeUnitsPerNode = 1;
    StepTime t2 = estimateTime(m, analyticLoad(m, two), two, one);
    EXPECT_NEAR(t2.bubble, 0, 1e-9 * t2.compute);
    one.computeUnitsPerNode = 2;
    t2 = estimateTime(m, analyticLoad(m, two), two, one);
    EXPECT_NEAR(t2.bubble / t2.compute, 0.5, 1e-9);
  }
  hw.computeUnitsPerNode = 4; // a unit each: the bubble of separate devices
  StepTime separate = estimateTime(m, analyticLoad(m, p), p, hw);
  EXPECT_NEAR(separate.bubble / separate.compute, 3.0 / 2, 1e-12);
}

TEST(Planning, EnumeratedPlansUseEveryDeviceAndDivideTheBatch) {
  ModelProfile m = mixedPrecision(1e9);
  m.layers = 12;
  m.keptSelectiveBytesPerSample = m.keptBytesPerSample = 1;
  Hardware hw;
  hw.devicesPerNode = 8;
  SearchSpace space;
  space.devices = 16;
  space.globalBatch = 96;
  std::vector<Plan> plans = enumeratePlans(m, space, hw);
  ASSERT_FALSE(plans.empty());
  bool sawPipeline = false;
  for (const Plan &p : plans) {
    EXPECT_EQ(p.devices(), 16) << p.describe();
    EXPECT_EQ(p.dp * p.microbatches * p.microBatchSize, 96) << p.describe();
    EXPECT_LE(p.tp, 8) << p.describe();
    EXPECT_EQ(m.layers % p.pp, 0) << p.describe();
    if (p.pp > 1) {
      sawPipeline = true;
      EXPECT_GE(p.microbatches, p.pp) << p.describe();
    }
    EXPECT_TRUE(p.dp > 1 || p.zero == 0) << p.describe();
    EXPECT_TRUE(p.tp > 1 || !p.sequenceParallel) << p.describe();
  }
  EXPECT_TRUE(sawPipeline);
}

TEST(Planning, PlansBecomeCompileOptions) {
  Plan p;
  p.dp = 4, p.tp = 8, p.pp = 2, p.sequenceParallel = true, p.zero = 1;
  p.microbatches = 16, p.microBatchSize = 2, p.recompute = "selective";
  CompileOptions o = compileOptions(p);
  EXPECT_EQ(o.mesh, "dp=4,tp=8,pp=2");
  EXPECT_EQ(o.pipeline, "schedule=1f1b microbatches=16 axis=pp");
  EXPECT_EQ(o.optimizerOptions, "recompute=tagged");
  EXPECT_EQ(o.modelBatch, 8);
  EXPECT_EQ(o.globalBatch, 128);
  EXPECT_FALSE(o.accumulate);
  for (const char *key : {"\"act_seq\":\"tp\"", "\"heads\":\"tp\"",
                          "\"batch\":\"dp\"", "\"optimizer_state\""})
    EXPECT_NE(o.rules.find(key), std::string::npos) << o.rules;
  p.pp = 1, p.zero = 3, p.tp = 1, p.sequenceParallel = false;
  o = compileOptions(p);
  EXPECT_EQ(o.mesh, "dp=4,tp=1");
  EXPECT_TRUE(o.accumulate);
  EXPECT_TRUE(o.pipeline.empty());
  EXPECT_NE(o.rules.find("\"embed\":{\"axes\":\"dp\""), std::string::npos)
      << o.rules;
}

TEST(Planning, HardwareDescriptionsNameWhatIsMissing) {
  llvm::Expected<Hardware> ok = parseHardware(
      *llvm::json::parse(R"({"name": "x", "memory_gib": 80,
        "peak_tflops": {"bf16": 1000}, "matmul_efficiency": 0.5,
        "devices_per_node": 8, "links": {
          "intra_node": {"bandwidth_gbytes_per_s": 400, "latency_us": 5},
          "inter_node": {"bandwidth_gbytes_per_s": 50, "latency_us": 10}}})"),
      "x.json");
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_DOUBLE_EQ(ok->peak("bf16"), 1e15);
  EXPECT_DOUBLE_EQ(ok->interNode.bandwidth, 50e9);
  llvm::Expected<Hardware> bad = parseHardware(
      *llvm::json::parse(R"({"memory_gib": 80, "peak_tflops": {"bf16": 1},
        "matmul_efficiency": 0.5, "devices_per_node": 8, "links": {
          "intra_node": {"bandwidth_gbytes_per_s": 400, "latency_us": 5},
          "inter_node": {"latency_us": 10}}})"),
      "bad.json");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "bad.json: links.inter_node.bandwidth_gbytes_per_s: a number is "
            "required");
  // Fields that may be left out but not be negative.
  for (const char *field :
       {"compute_units_per_node", "memory_bandwidth_gbytes_per_s"}) {
    std::string text = R"({"memory_gib": 8, "peak_tflops": {"f32": 1},
        "matmul_efficiency": 1, "devices_per_node": 4, ")" +
                       std::string(field) + R"(": -2, "links": {
          "intra_node": {"bandwidth_gbytes_per_s": 1, "latency_us": 5},
          "inter_node": {"bandwidth_gbytes_per_s": 1, "latency_us": 5}}})";
    llvm::Expected<Hardware> negative =
        parseHardware(*llvm::json::parse(text), "cpu.json");
    ASSERT_FALSE(bool(negative)) << field;
    EXPECT_NE(llvm::toString(negative.takeError())
                  .find("compute_units_per_node and "
                        "memory_bandwidth_gbytes_per_s not negative"),
              std::string::npos);
  }
}

/// A fused chain of element-wise ops reads its inputs and writes what
/// something else uses; matmuls and constants move nothing here.
TEST(Planning, MemoryTrafficCountsFusedChainsOnce) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::tessel::TesselDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>,
                 %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
      %a = tessel.add %x, %y : tensor<4x8xf32>
      %b = tessel.exp %a : tensor<4x8xf32>
      %c = tessel.dot_general %b, %w, batching = [] x [], contracting = [1] x [0]
          : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %d = tessel.mul %c, %b : tensor<4x8xf32>
      %s = tessel.reduce sum %d, dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      return %d : tensor<4x8xf32>
    })",
                                                         &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  // 128 bytes a 4x8 tensor: add reads x and y (256; its result stays in
  // the chain), exp writes b for the matmul (128), mul reads c (b is the
  // chain's) and writes d for the reduction (256), which reads d and writes
  // 16 bytes (144).
  EXPECT_EQ(memoryTrafficBytes(f), 784);
  EXPECT_EQ(memoryTrafficBytes(f,
                               [](mlir::Operation *op) {
                                 return !mlir::isa<mlir::tessel::ReduceOp>(op);
                               }),
            640);
  EXPECT_EQ(matmulFlops(f), 2.0 * 4 * 8 * 8);
}

/// Accumulating micro-steps each reduce their gradients and run the
/// update (Tessel compiles them as calls of the whole step); a pipeline's
/// microbatches do neither more than once.
TEST(Planning, AccumulationRepeatsTheReductionAndTheUpdate) {
  ModelProfile m = mixedPrecision(1e9);
  m.perParameter = {4, 4, 8};
  m.trainFlopsPerSample = 1e12;
  m.forwardFlopsPerSample = 1e12 / 3;
  m.trafficBytesPerSample = 1e9;
  m.updateTrafficPerParameter = 40;
  Hardware hw;
  hw.peakFlops["f32"] = 1e12;
  hw.efficiency = 1;
  hw.overlap = 0;
  hw.memoryBandwidth = 1e11;
  hw.intraNode = hw.interNode = {"link", 1e10, 0};
  Plan one;
  one.dp = 4, one.microBatchSize = 8;
  Plan four = one;
  four.microbatches = 4, four.microBatchSize = 2;
  StepTime t1 = estimateTime(m, analyticLoad(m, one), one, hw);
  StepTime t4 = estimateTime(m, analyticLoad(m, four), four, hw);
  // 8 samples: 8 s of matmuls, 8e9 / 1e11 = 0.08 s of traffic; the update
  // 40 GB at 100 GB/s = 0.4 s once, 1.6 s over four micro-steps.
  EXPECT_NEAR(t1.compute, 8 + 0.08 + 0.4, 1e-9);
  EXPECT_NEAR(t4.compute, 8 + 0.08 + 1.6, 1e-9);
  // An all-reduce of 4 GB of gradients: 2 x 3/4 x 4e9 / 1e10 = 0.6 s each.
  EXPECT_NEAR(t1.dp, 0.6, 1e-9);
  EXPECT_NEAR(t4.dp, 4 * 0.6, 1e-9);
  // ZeRO-1 updates a quarter of the parameters on each device.
  Plan zero = one;
  zero.zero = 1;
  StepTime tz = estimateTime(m, analyticLoad(m, zero), zero, hw);
  EXPECT_NEAR(tz.compute, 8 + 0.08 + 0.1, 1e-9);
  // Recomputing layers adds the forward's traffic (a third, here) as well.
  Plan again = one;
  again.recompute = "layers";
  m.forwardTrafficBytesPerSample = m.trafficBytesPerSample / 3;
  StepTime tr = estimateTime(m, analyticLoad(m, again), again, hw);
  EXPECT_NEAR(tr.compute, 8 + 8.0 / 3 + 0.08 * 4 / 3 + 0.4, 1e-9);
}

/// A data-parallel reduction takes one all-reduce per bucket as
/// --tessel-optimize-collectives packs them: large gradients alone, small
/// ones in order into 1 MiB buckets; its latency is paid per bucket.
TEST(Planning, GradientReductionsArePackedIntoBuckets) {
  const double mib = 1 << 20;
  EXPECT_EQ(gradientBuckets({}), 0);
  // 2 MiB alone; 0.5 + 0.25; 0.5 + 0.1 (0.75 + 0.5 would not fit).
  EXPECT_EQ(gradientBuckets({2 * mib, 0.5 * mib, 0.25 * mib, 0.5 * mib,
                             0.1 * mib}),
            3);
  EXPECT_EQ(gradientBuckets(std::vector<double>(64, mib / 64)), 1);
  ModelProfile m = mixedPrecision(1e6);
  m.perParameter = {4, 4, 8};
  m.parameterTensorElements.assign(100, 1e4); // 40 KB of gradient each
  Hardware hw;
  hw.peakFlops["f32"] = 1e12;
  hw.intraNode = hw.interNode = {"link", 1e10, 1e-3};
  Plan dp;
  dp.dp = 4;
  DeviceLoad load = analyticLoad(m, dp);
  EXPECT_EQ(load.gradientBuckets, 4); // 26 tensors a bucket
  // 4 buckets of latency and 2 x 3/4 x 4 MB at 10 GB/s.
  EXPECT_NEAR(estimateTime(m, load, dp, hw).dp, 4e-3 + 6e-4, 1e-9);
  // ZeRO-1 reduces alike, then gathers each of the 100 tensors apart:
  // 3/4 x 4 MB at 10 GB/s and 100 latencies more.
  Plan zero1 = dp;
  zero1.zero = 1;
  EXPECT_NEAR(estimateTime(m, analyticLoad(m, zero1), zero1, hw).dp,
              4e-3 + 6e-4 + 3e-4 + 0.1, 1e-9);
}

} // namespace
