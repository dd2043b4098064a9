//===- CpuTarget.cpp - which CPU an executable is compiled for ------------===//
//
// tessel-compile --cpu: a portable default (x86-64-v3 on x86-64 hosts: AVX2
// and FMA, what every x86 server since 2013-2015 has), "native" (this
// machine's CPU and every feature it has), the x86-64 levels, or any CPU
// name LLVM knows for the host's architecture. The chosen CPU and the
// instruction-set features it implies are recorded in the program
// description, which the executable checks against its machine at start-up.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/runtime/CpuFeatures.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

using namespace mlir;
using namespace mlir::tessel;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string mlir::tessel::defaultCpu() {
  llvm::Triple host(llvm::sys::getDefaultTargetTriple());
  return host.getArch() == llvm::Triple::x86_64 ? "x86-64-v3" : "generic";
}

/// The architecture, among a few common ones, whose LLVM target knows `cpu`.
static std::string architectureOf(llvm::StringRef cpu) {
  for (const char *t :
       {"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu",
        "riscv64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu",
        "armv7-unknown-linux-gnueabihf", "s390x-unknown-linux-gnu"}) {
    llvm::Triple triple(t);
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      continue;
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (info && info->isCPUStringValid(cpu))
      return triple.getArchName().str();
  }
  return "";
}

static std::string cpuNamesOf(const llvm::MCSubtargetInfo &info) {
  std::string names;
  for (const llvm::SubtargetSubTypeKV &kv : info.getAllProcessorDescriptions())
    names += (names.empty() ? "" : " ") + std::string(kv.Key);
  return names;
}

llvm::Expected<CpuSelection> mlir::tessel::selectCpu(llvm::StringRef requested) {
  initializeTargets();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no LLVM target for " + triple.str() + ": " + error);
  CpuSelection s;
  s.described.triple = triple.str();
  s.described.requested = requested.empty() ? defaultCpu() : requested.str();
  s.described.cpu = s.described.requested;
  std::string arch = triple.getArchName().str();
  if (s.described.requested == "native") {
    // LLVM's view of the host, less what the runtime's own detector (the
    // one the executable checks with) does not confirm: a CPU model may
    // imply a feature a virtual machine hides.
    s.described.cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> confirmed = ::tessel::rt::hostCpuFeatures();
    llvm::SubtargetFeatures features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
    std::unique_ptr<llvm::MCSubtargetInfo> model(target->createMCSubtargetInfo(
        triple, s.described.cpu, features.getString()));
    for (const llvm::SubtargetFeatureKV &kv : model->getAllProcessorFeatures())
      if (model->getFeatureBits().test(kv.Value) &&
          ::tessel::rt::isCheckableCpuFeature(arch, kv.Key) &&
          !llvm::is_contained(confirmed, kv.Key))
        features.AddFeature(kv.Key, /*Enable=*/false);
    s.llvmFeatures = features.getString();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(
      triple, s.described.cpu, s.llvmFeatures));
  if (!info)
    return fail("LLVM has no subtarget information for " + triple.str());
  if (!info->isCPUStringValid(s.described.cpu)) {
    std::string arch = architectureOf(s.described.cpu);
    if (!arch.empty() && arch != triple.getArchName())
      return fail("--cpu " + s.described.cpu + " is a CPU of " + arch +
                  ", but tessel-compile generates code for " +
                  triple.getArchName() + " (this machine's architecture); " +
                  "compile on a " + arch + " machine");
    return fail("unknown --cpu '" + s.described.cpu +
                "'; give native, a portable level (x86-64, x86-64-v2, "
                "x86-64-v3, x86-64-v4 on x86-64) or one of LLVM's CPU names "
                "for " + triple.getArchName() + ": " + cpuNamesOf(*info));
  }
  const llvm::FeatureBitset &bits = info->getFeatureBits();
  for (const llvm::SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
    if (bits.test(kv.Value) &&
        ::tessel::rt::isCheckableCpuFeature(arch, kv.Key))
      s.described.features.push_back(kv.Key);
  return s;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::tessel::createTargetMachine(const CpuSelection &cpu, unsigned optLevel) {
  initializeTargets();
  llvm::Triple triple(cpu.described.triple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no LLVM target for " + triple.str() + ": " + error);
  llvm::CodeGenOptLevel level = optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                                : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                : llvm::CodeGenOptLevel::None;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu.described.cpu, cpu.llvmFeatures, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return fail("could not create a target machine for " + triple.str() +
                " and CPU " + cpu.described.cpu);
  return std::move(tm);
}
