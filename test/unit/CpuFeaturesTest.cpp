//===- CpuFeaturesTest.cpp - the executable's start-up CPU check ----------===//

#include "tessel/runtime/CpuFeatures.h"

#include <gtest/gtest.h>

using namespace tessel::rt;

namespace {

const std::vector<std::string> kV2 = {"x87",    "cx8",   "cmov",   "mmx",
                                      "fxsr",   "sse",   "sse2",   "64bit",
                                      "cx16",   "sahf",  "popcnt", "sse3",
                                      "sse4.1", "sse4.2", "ssse3", "crc32"};

std::vector<std::string> plus(std::vector<std::string> a,
                              const std::vector<std::string> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<std::string> kV3 =
    plus(kV2, {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe",
               "xsave"});

CpuTarget target(const std::string &cpu, std::vector<std::string> features) {
  return {"x86_64-pc-linux-gnu", cpu, cpu, std::move(features)};
}

// Tests that a machine with every required feature runs the program.
TEST(CpuFeatures, AcceptsAMachineWithEveryFeature) {
  EXPECT_EQ(cpuMismatch(target("x86-64-v3", kV3), "x86_64", kV3), "");
  EXPECT_EQ(cpuMismatch(target("x86-64-v2", kV2), "x86_64", kV3), "");
  // Programs described before compilation name no CPU.
  EXPECT_EQ(cpuMismatch(CpuTarget{}, "x86_64", {}), "");
}

// Tests that missing features are named, with the --cpu to compile with.
TEST(CpuFeatures, NamesMissingFeaturesAndTheCpuToUse) {
  std::string why = cpuMismatch(
      target("sapphirerapids", plus(kV3, {"avx512f", "avx512bf16"})),
      "x86_64", kV3);
  EXPECT_NE(why.find("lacks avx512f, avx512bf16;"), std::string::npos) << why;
  EXPECT_NE(why.find("--cpu sapphirerapids"), std::string::npos) << why;
  EXPECT_NE(why.find("or --cpu x86-64-v3 to run"), std::string::npos) << why;
}

// Tests that another architecture is refused before its features.
TEST(CpuFeatures, RefusesAnotherArchitecture) {
  CpuTarget arm{"aarch64-unknown-linux-gnu", "neoverse-v2", "neoverse-v2",
                {"neon"}};
  EXPECT_EQ(cpuMismatch(arm, "x86_64", kV3),
            "this program was compiled for aarch64 and this machine is x86_64");
}

// Tests the portable level suggested for a machine.
TEST(CpuFeatures, PortableLevels) {
  EXPECT_EQ(portableCpuFor("x86_64", kV2), "x86-64-v2");
  EXPECT_EQ(portableCpuFor("x86_64", kV3), "x86-64-v3");
  EXPECT_EQ(portableCpuFor("x86_64",
                           plus(kV3, {"avx512f", "avx512bw", "avx512cd",
                                      "avx512dq", "avx512vl"})),
            "x86-64-v4");
  EXPECT_EQ(portableCpuFor("x86_64", {"sse"}), "");
  EXPECT_EQ(portableCpuFor("aarch64", {}), "generic");
}

// Tests that this machine reports its features under LLVM's names, and
// that every reported feature is one the compiler may record.
TEST(CpuFeatures, DetectsThisMachine) {
  std::vector<std::string> host = hostCpuFeatures();
  for (const std::string &f : host)
    EXPECT_TRUE(isCheckableCpuFeature(hostArch(), f)) << f;
  if (hostArch() == "x86_64") {
    // Every x86-64 CPU has SSE2; tuning flags are not features to check.
    EXPECT_NE(std::find(host.begin(), host.end(), "sse2"), host.end());
    EXPECT_FALSE(isCheckableCpuFeature("x86_64", "slow-3ops-lea"));
    EXPECT_FALSE(portableCpuFor("x86_64", host).empty());
  }
}

} // namespace
