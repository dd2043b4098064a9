//===- BlasGemm.cpp - matmuls of the CPU target through OpenBLAS ----------===//
//
// tessel_rt_gemm_f32/f64 (runtime/Abi.h): the CPU target widens bf16/f16
// matmuls to f32, so these two are all it calls.
//
//===----------------------------------------------------------------------===//

#include "Timer.h"
#include "tessel/runtime/Abi.h"

#include <cblas.h>

using namespace tessel;
using namespace tessel::rt;

namespace {
/// C[b] = op(A[b]) op(B[b]) through cblas_sgemm or cblas_dgemm.
template <typename T, typename Gemm>
void gemm(Gemm blas, const char *suffix, const T *A, const T *B, T *C,
          int64_t batch, int64_t m, int64_t n, int64_t k, int64_t transA,
          int64_t transB) {
  Timer t(currentRank().gemmSeconds, "compute",
          [&] { return gemmName(batch, m, n, k) + suffix; });
  currentRank().gemmFlops += 2.0 * batch * m * n * k;
  for (int64_t i = 0; i < batch; ++i)
    blas(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
         transB ? CblasTrans : CblasNoTrans, m, n, k, T(1), A + i * m * k,
         transA ? m : k, B + i * k * n, transB ? k : n, T(0), C + i * m * n, n);
}
} // namespace

extern "C" void tessel_rt_gemm_f32(TESSEL_RT_MEMREF(float, a),
                                   TESSEL_RT_MEMREF(float, b),
                                   TESSEL_RT_MEMREF(float, c), int64_t batch,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t transA, int64_t transB) {
  gemm<float>(cblas_sgemm, "", a + a_offset, b + b_offset, c + c_offset, batch,
              m, n, k, transA, transB);
}

extern "C" void tessel_rt_gemm_f64(TESSEL_RT_MEMREF(double, a),
                                   TESSEL_RT_MEMREF(double, b),
                                   TESSEL_RT_MEMREF(double, c), int64_t batch,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t transA, int64_t transB) {
  gemm<double>(cblas_dgemm, " f64", a + a_offset, b + b_offset, c + c_offset,
               batch, m, n, k, transA, transB);
}

