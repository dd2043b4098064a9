//===- Target.cpp - the registry of backends ------------------------------===//

#include "tessel/lowering/Target.h"
#include "tessel/lowering/Lowering.h"

#include "llvm/ADT/StringExtras.h"

#include <map>
#include <mutex>

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, Target> targets;
};

Registry &registry() {
  static Registry r;
  static std::once_flag builtins;
  std::call_once(builtins, [] {
    r.targets["cpu"] = Target{
        "cpu",
        "CPUs: matmuls through OpenBLAS (bf16/f16 widened to f32), "
        "collectives and send/recv through libtessel_rt (threads or MPI)",
        populateCpuDevicePatterns, "tessel-cpu-lowering", false};
    r.targets["cuda"] = Target{
        "cuda",
        "NVIDIA GPUs: generated kernels (NVVM, fatbin for --gpu-arch), "
        "matmuls through cuBLASLt (bf16/f16 kept), collectives through "
        "libtessel_rt",
        populateCudaDevicePatterns, "tessel-cuda-lowering", true};
  });
  return r;
}

} // namespace

void mlir::tessel::registerTarget(Target target) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string name = target.name;
  r.targets[name] = std::move(target);
}

const Target *mlir::tessel::lookupTarget(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.targets.find(name.str());
  return it == r.targets.end() ? nullptr : &it->second;
}

std::string mlir::tessel::listTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &[name, target] : r.targets)
    names.push_back(name);
  return llvm::join(names, ", ");
}
