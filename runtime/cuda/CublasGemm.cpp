//===- CublasGemm.cpp - matmuls of the cuda target through cuBLASLt -------===//
//
// tessel_rt_gemm_{f32,f64,bf16,f16} (runtime/Abi.h) on cuBLASLt. bf16 and
// f16 matmuls keep their types and accumulate in f32 (one rounding of the
// f32 sum, as the CPU target's widened sgemm); f32 runs in full f32 unless
// TESSEL_ALLOW_TF32=1 lets cuBLASLt use tf32 tensor cores.
//
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so B is
// cuBLASLt's first operand. Each distinct problem (type, batch, m, n, k,
// transposes) gets its descriptors and algorithm once (the heuristic's
// first choice) and keeps them.
//
// libcublasLt is loaded on first use (dlopen), from LD_LIBRARY_PATH or the
// system's library paths: the executable starts without it, and says what
// is missing when it is not there.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Timer.h"
#include "CudaTimeline.h"
#include "CudaCheck.h"
#include "tessel/runtime/Abi.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

using namespace tessel::rt;

namespace {

#define TESSEL_CUBLASLT_FUNCTIONS(X)                                           \
  X(cublasLtCreate)                                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

struct CublasLt {
#define DECLARE(name) decltype(&::name) name = nullptr;
  TESSEL_CUBLASLT_FUNCTIONS(DECLARE)
#undef DECLARE
};

const CublasLt &library() {
  static CublasLt lib = [] {
    CublasLt l;
    void *h = nullptr;
    for (const char *name :
         {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!h) {
      std::fprintf(stderr,
                   "error: this program's matmuls need cuBLASLt, and "
                   "libcublasLt.so.13 (or .12) is not on the library path; "
                   "install the CUDA toolkit's libraries or the "
                   "nvidia-cublas Python package and add its lib directory "
                   "to LD_LIBRARY_PATH\n");
      std::exit(1);
    }
#define LOAD(name)                                                             \
  l.name = reinterpret_cast<decltype(l.name)>(dlsym(h, #name));                \
  if (!l.name) {                                                               \
    std::fprintf(stderr, "error: libcublasLt lacks " #name "\n");             \
    std::exit(1);                                                              \
  }
    TESSEL_CUBLASLT_FUNCTIONS(LOAD)
#undef LOAD
    return l;
  }();
  return lib;
}

void checkLt(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  std::fprintf(stderr, "error: cuBLASLt %s failed (status %d)\n", what,
               int(status));
  std::exit(1);
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

/// A problem's descriptors and algorithm.
struct Plan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
};

using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int>;

/// Per thread (one rank, one GPU): the handle, workspace and plans.
struct State {
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  std::map<Key, Plan> plans;
};
thread_local State state;

cublasLtMatrixLayout_t layout(cudaDataType_t type, uint64_t rows,
                              uint64_t cols, int64_t ld, int64_t batch,
                              int64_t stride) {
  const CublasLt &lt = library();
  cublasLtMatrixLayout_t l;
  checkLt(lt.cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "layout");
  int32_t count = int32_t(batch);
  checkLt(lt.cublasLtMatrixLayoutSetAttribute(
              l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
          "layout");
  checkLt(lt.cublasLtMatrixLayoutSetAttribute(
              l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
              sizeof(stride)),
          "layout");
  return l;
}

const Plan &planFor(cudaDataType_t type, cublasComputeType_t compute,
                    cudaDataType_t scale, int64_t batch, int64_t m, int64_t n,
                    int64_t k, int64_t transA, int64_t transB) {
  const CublasLt &lt = library();
  if (!state.handle) {
    checkLt(lt.cublasLtCreate(&state.handle), "create");
    cuda::check(cudaMalloc(&state.workspace, kWorkspaceBytes),
                "allocating the cuBLASLt workspace");
  }
  Key key{int(type), batch, m, n, k, transA, transB, int(compute)};
  auto it = state.plans.find(key);
  if (it != state.plans.end())
    return it->second;
  Plan p;
  checkLt(lt.cublasLtMatmulDescCreate(&p.desc, compute, scale), "desc");
  // cuBLASLt's A is our B, its B our A (see the top of the file).
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(lt.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &opFirst, sizeof(opFirst)),
          "desc");
  checkLt(lt.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &opSecond, sizeof(opSecond)),
          "desc");
  p.a = transB ? layout(type, k, n, k, batch, k * n)
               : layout(type, n, k, n, batch, k * n);
  p.b = transA ? layout(type, m, k, m, batch, m * k)
               : layout(type, k, m, k, batch, m * k);
  p.c = layout(type, n, m, n, batch, m * n);
  cublasLtMatmulPreference_t pref;
  checkLt(lt.cublasLtMatmulPreferenceCreate(&pref), "preference");
  size_t ws = kWorkspaceBytes;
  checkLt(lt.cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
          "preference");
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  checkLt(lt.cublasLtMatmulAlgoGetHeuristic(state.handle, p.desc, p.a, p.b,
                                            p.c, p.c, pref, 1, &result,
                                            &found),
          "heuristic");
  if (found == 0) {
    std::fprintf(stderr,
                 "error: cuBLASLt has no algorithm for a %lldx%lldx%lld "
                 "matmul (batch %lld)\n",
                 (long long)m, (long long)n, (long long)k, (long long)batch);
    std::exit(1);
  }
  p.algo = result.algo;
  return state.plans.emplace(key, p).first->second;
}

template <typename Scale>
void gemm(cudaDataType_t type, cublasComputeType_t compute,
          cudaDataType_t scaleType, const char *suffix, const void *A,
          const void *B, void *C, int64_t batch, int64_t m, int64_t n,
          int64_t k, int64_t transA, int64_t transB) {
  Timer t(currentRank().gemmSeconds, "compute",
          [&] { return gemmName(batch, m, n, k) + suffix; });
  currentRank().gemmFlops += 2.0 * batch * m * n * k;
  if (type == CUDA_R_16BF || type == CUDA_R_16F)
    currentRank().halfGemmFlops += 2.0 * batch * m * n * k;
  if (batch == 0 || m == 0 || n == 0)
    return;
  const Plan &p =
      planFor(type, compute, scaleType, batch, m, n, k, transA, transB);
  Scale one = 1, zero = 0;
  DeviceTimeline *spans = cuda::timeline();
  if (spans)
    spans->begin(currentRank(), cudaStreamPerThread,
                 gemmName(batch, m, n, k) + suffix, "compute",
                 TraceEvent::kDeviceCompute);
  if (k == 0) {
    // An empty sum: cuBLASLt may reject k = 0.
    size_t elem = type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
    cuda::check(cudaMemsetAsync(C, 0, size_t(batch * m * n) * elem,
                                cudaStreamPerThread),
                "clearing an empty matmul");
  } else {
    checkLt(library().cublasLtMatmul(state.handle, p.desc, &one, B, p.a, A,
                                     p.b, &zero, C, p.c, C, p.c, &p.algo,
                                     state.workspace, kWorkspaceBytes,
                                     cudaStreamPerThread),
            "matmul");
  }
  if (spans)
    spans->end();
  cuda::check(cudaStreamSynchronize(cudaStreamPerThread), "a matmul");
  if (spans)
    spans->collect(currentRank(), /*wait=*/false);
}

cublasComputeType_t f32Compute() {
  static bool tf32 = [] {
    const char *v = std::getenv("TESSEL_ALLOW_TF32");
    return v && v[0] == '1';
  }();
  return tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

} // namespace

extern "C" void tessel_rt_gemm_f32(TESSEL_RT_MEMREF(float, a),
                                   TESSEL_RT_MEMREF(float, b),
                                   TESSEL_RT_MEMREF(float, c), int64_t batch,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t transA, int64_t transB) {
  gemm<float>(CUDA_R_32F, f32Compute(), CUDA_R_32F, "", a + a_offset,
              b + b_offset, c + c_offset, batch, m, n, k, transA, transB);
}

extern "C" void tessel_rt_gemm_f64(TESSEL_RT_MEMREF(double, a),
                                   TESSEL_RT_MEMREF(double, b),
                                   TESSEL_RT_MEMREF(double, c), int64_t batch,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t transA, int64_t transB) {
  gemm<double>(CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, " f64",
               a + a_offset, b + b_offset, c + c_offset, batch, m, n, k,
               transA, transB);
}

extern "C" void tessel_rt_gemm_bf16(TESSEL_RT_MEMREF(uint16_t, a),
                                    TESSEL_RT_MEMREF(uint16_t, b),
                                    TESSEL_RT_MEMREF(uint16_t, c),
                                    int64_t batch, int64_t m, int64_t n,
                                    int64_t k, int64_t transA,
                                    int64_t transB) {
  gemm<float>(CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, " bf16",
              a + a_offset, b + b_offset, c + c_offset, batch, m, n, k,
              transA, transB);
}

extern "C" void tessel_rt_gemm_f16(TESSEL_RT_MEMREF(uint16_t, a),
                                   TESSEL_RT_MEMREF(uint16_t, b),
                                   TESSEL_RT_MEMREF(uint16_t, c),
                                   int64_t batch, int64_t m, int64_t n,
                                   int64_t k, int64_t transA, int64_t transB) {
  gemm<float>(CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, " f16",
              a + a_offset, b + b_offset, c + c_offset, batch, m, n, k,
              transA, transB);
}
