//===- CudaPipeline.cpp - linalg on tensors to host code plus GPU kernels -===//
//
// The `cuda` target's pipeline, `tessel-cuda-lowering{chip= toolkit=}`:
//
//  1. long reductions with few outputs split in two parallel steps
//     (tessel-split-reductions), then what every target shares: fusion, bufferization, results as
//     out-parameters, deallocation, copies as linalg (buildBufferizePipeline),
//     and scalar math done alike (bf16/f16 arithmetic in f32, conversions as
//     integer code, polynomial exp/log/tanh/erf: the GPU computes the same
//     bits as the CPU, buildScalarMathPipeline);
//  2. every linalg op a loop nest (convert-linalg-to-parallel-loops), each
//     top-level nest a gpu.launch (tessel-map-loops-to-gpu), each launch a
//     kernel (gpu-kernel-outlining);
//  3. kernels to NVVM, the host to the LLVM dialect (kernel launches become
//     calls of the mgpu* functions runtime/cuda implements; allocation the
//     runtime's, in managed memory), and the kernels to a fatbin for `chip`
//     (its SASS through the toolkit's ptxas, plus PTX for newer GPUs),
//     embedded in the host module (gpu-module-to-binary).
//
// Matmuls are not kernels: the target's patterns call cuBLASLt through
// libtessel_rt (tessel_rt_gemm_*), as the CPU target calls OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVM/NVVM/Target.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::tessel;

#ifndef TESSEL_CUDA_TOOLKIT
#define TESSEL_CUDA_TOOLKIT "/usr/local/cuda"
#endif

namespace {

/// Step 2 and 3, after the shared passes. %s: chip, toolkit.
constexpr const char *kToLaunches =
    "convert-linalg-to-parallel-loops,"
    "canonicalize,"
    "tessel-map-loops-to-gpu";
constexpr const char *kToKernels =
    "gpu-kernel-outlining,"
    "tessel-merge-gpu-modules,"
    "expand-strided-metadata,"
    "lower-affine,"
    "convert-scf-to-cf,"
    "canonicalize,cse";
constexpr const char *kDeviceToNVVM =
    "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
    "reconcile-unrealized-casts)";

struct CudaPipelineOptions : PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{
      *this, "chip", llvm::cl::desc("The GPU architecture (sm_90, sm_80...)"),
      llvm::cl::init("sm_90")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit whose ptxas and fatbinary build the "
                     "kernels"),
      llvm::cl::init(TESSEL_CUDA_TOOLKIT)};
};

/// Up to gpu.launch ops in host functions.
LogicalResult buildLaunchPipeline(OpPassManager &pm) {
  pm.addPass(createSplitReductionsPass());
  if (failed(buildBufferizePipeline(pm)) ||
      failed(buildScalarMathPipeline(pm)))
    return failure();
  return parsePassPipeline(kToLaunches, pm);
}

LogicalResult buildCudaLoweringPipeline(OpPassManager &pm,
                                        const CudaPipelineOptions &options) {
  if (failed(buildLaunchPipeline(pm)) ||
      failed(parsePassPipeline(kToKernels, pm)))
    return failure();
  std::string attach =
      "nvvm-attach-target{chip=" + options.chip + " O=3}," + kDeviceToNVVM +
      "," + hostConversionsToLLVM().str() +
      ",gpu-to-llvm,reconcile-unrealized-casts,"
      "gpu-module-to-binary{format=fatbin toolkit=" +
      options.toolkit + "}";
  return parsePassPipeline(attach, pm);
}

} // namespace

void mlir::tessel::registerCudaPipeline(DialectRegistry &registry) {
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerPass([] { return createMapLoopsToGpuPass(); });
  registerPass([] { return createMergeGpuModulesPass(); });
  registerPass([] { return createSplitReductionsPass(); });
  PassPipelineRegistration<CudaPipelineOptions>(
      "tessel-cuda-lowering",
      "Linalg on tensors to host code in the LLVM dialect plus embedded GPU "
      "kernels: fusion, bufferization, loops mapped to launches, NVVM, "
      "fatbin (after tessel-lower-to-linalg{target=cuda})",
      [](OpPassManager &pm, const CudaPipelineOptions &options) {
        if (failed(buildCudaLoweringPipeline(pm, options)))
          llvm::report_fatal_error("the CUDA pipeline does not parse");
      });
  registerPass([] { return createGpuLaunchesToLoopsPass(); });
  PassPipelineRegistration<>(
      "tessel-gpu-emulation-lowering",
      "The cuda pipeline's mapping of loops to launches, then every launch "
      "run as host loops and the CPU's lowering: checks the GPU mapping on "
      "machines without a GPU (tessel-compile --lowering-pipeline)",
      [](OpPassManager &pm) {
        if (failed(buildLaunchPipeline(pm)))
          llvm::report_fatal_error("the emulation pipeline does not parse");
        pm.addPass(createGpuLaunchesToLoopsPass());
        if (failed(buildHostToLLVMPipeline(pm)))
          llvm::report_fatal_error("the emulation pipeline does not parse");
      });
}
