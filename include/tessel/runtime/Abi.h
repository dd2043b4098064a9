/*===- Abi.h - the calls compiled programs make into libtessel_rt -*- C -*-===//
 *
 * Shared by the CPU lowering (which emits the calls) and the runtime (which
 * implements them), so the two cannot drift apart. Plain C: the callers are
 * LLVM-generated code.
 *
 * Buffers are 1-D memrefs passed the way MLIR's default calling convention
 * expands them: (allocated pointer, aligned pointer, offset, size, stride).
 * TESSEL_RT_MEMREF declares those five parameters; the data starts at
 * aligned + offset and is contiguous (stride 1).
 *
 * A collective names its communicator group by the group's index in the
 * program description's "groups" (tessel/program/Program.h): a mesh and the
 * axes whose devices communicate. The runtime makes every group at start-up.
 *
 * tessel_rt_collective_<type>(in, out, desc), tessel_rt_send_<type>(in,
 * desc) and tessel_rt_recv_<type>(out, desc) read their shape and
 * parameters from `desc`:
 *   [opcode, reduce kind, group, rank, in shape[rank], out shape[rank],
 *    p0, p1, number of pairs, pairs...]
 * p0/p1: all_gather and reduce_scatter: the dimension; all_to_all: split and
 * concat dimensions; collective_permute: pairs of (source, target) group
 * indices; send: the target's group index and the channel; recv: the
 * source's group index and the channel. A send returns once its bytes are
 * copied: it does not wait for the receiver.
 *
 * A collective may also be split in two, so that the program computes while
 * it is in flight: tessel_rt_collective_start_<type>(in, out, desc) starts
 * it and returns; tessel_rt_collective_wait_<type>(in, out, desc), with the
 * same buffers, completes it. Until the wait, `in` must stay unchanged and
 * `out` unread; every start has its wait before the entry returns (the run
 * stops with a message otherwise).
 *===----------------------------------------------------------------------===*/

#ifndef TESSEL_RUNTIME_ABI_H
#define TESSEL_RUNTIME_ABI_H

#include <stdint.h>

#define TESSEL_RT_MEMREF(T, name)                                              \
  T *name##_allocated, T *name, int64_t name##_offset, int64_t name##_size,    \
      int64_t name##_stride

enum TesselRtOpcode {
  TESSEL_RT_ALL_REDUCE = 0,
  TESSEL_RT_ALL_GATHER = 1,
  TESSEL_RT_REDUCE_SCATTER = 2,
  TESSEL_RT_ALL_TO_ALL = 3,
  TESSEL_RT_COLLECTIVE_PERMUTE = 4,
  TESSEL_RT_SEND = 5,
  TESSEL_RT_RECV = 6,
};

enum TesselRtReduceKind {
  TESSEL_RT_SUM = 0,
  TESSEL_RT_MAX = 1,
  TESSEL_RT_MIN = 2,
};

/* Descriptor field positions (fixed part). */
enum {
  TESSEL_RT_DESC_OPCODE = 0,
  TESSEL_RT_DESC_KIND = 1,
  TESSEL_RT_DESC_GROUP = 2,
  TESSEL_RT_DESC_RANK = 3,
  TESSEL_RT_DESC_SHAPES = 4,
};

/* The entry points of a compiled program, tessel_entry_K for the
 * description's entry K: void (void **buffers), one pointer per argument,
 * then one per result, each to a contiguous buffer of the local
 * (per-device) type. `tessel_entries` lists them in that order. */
#define TESSEL_RT_ENTRY "tessel_entry"
#define TESSEL_RT_ENTRIES "tessel_entries"
/* A NUL-terminated JSON description of the program (see runtime/README.md). */
#define TESSEL_RT_PROGRAM "tessel_program"

#ifdef __cplusplus
extern "C" {
#endif

/* C[b] = op(A[b]) * op(B[b]) for b < batch; A is MxK (KxM when transA), B is
 * KxN (NxK when transB), C is MxN, all row-major and contiguous. */
void tessel_rt_gemm_f32(TESSEL_RT_MEMREF(float, a), TESSEL_RT_MEMREF(float, b),
                        TESSEL_RT_MEMREF(float, c), int64_t batch, int64_t m,
                        int64_t n, int64_t k, int64_t transA, int64_t transB);
void tessel_rt_gemm_f64(TESSEL_RT_MEMREF(double, a),
                        TESSEL_RT_MEMREF(double, b),
                        TESSEL_RT_MEMREF(double, c), int64_t batch, int64_t m,
                        int64_t n, int64_t k, int64_t transA, int64_t transB);
/* bf16 and f16 (their bits as uint16_t), accumulated in f32: targets that
 * keep 16-bit matmuls (cuda) call these; the cpu target widens to f32. */
void tessel_rt_gemm_bf16(TESSEL_RT_MEMREF(uint16_t, a),
                         TESSEL_RT_MEMREF(uint16_t, b),
                         TESSEL_RT_MEMREF(uint16_t, c), int64_t batch,
                         int64_t m, int64_t n, int64_t k, int64_t transA,
                         int64_t transB);
void tessel_rt_gemm_f16(TESSEL_RT_MEMREF(uint16_t, a),
                        TESSEL_RT_MEMREF(uint16_t, b),
                        TESSEL_RT_MEMREF(uint16_t, c), int64_t batch,
                        int64_t m, int64_t n, int64_t k, int64_t transA,
                        int64_t transB);

/* tessel.custom_call: runs the kernel named in `desc` (found in the
 * --custom-calls libraries, tessel/runtime/CustomCall.h) on `buffers`, the
 * aligned addresses of its inputs then its outputs (as int64). `desc`:
 *   [number of inputs, number of outputs,
 *    per buffer (inputs, then outputs): dtype, rank, shape[rank],
 *    name length, name characters..., config length, config characters...]
 * (dtype as enum TesselDType, one character per element). A kernel that is
 * missing or fails ends the program with a message naming it. */
void tessel_rt_custom_call(TESSEL_RT_MEMREF(int64_t, buffers),
                           TESSEL_RT_MEMREF(int64_t, desc));

#define TESSEL_RT_DECLARE_COLLECTIVE(suffix, T)                                \
  void tessel_rt_collective_##suffix(TESSEL_RT_MEMREF(T, in),                  \
                                     TESSEL_RT_MEMREF(T, out),                 \
                                     TESSEL_RT_MEMREF(int64_t, desc));         \
  void tessel_rt_collective_start_##suffix(TESSEL_RT_MEMREF(T, in),            \
                                           TESSEL_RT_MEMREF(T, out),           \
                                           TESSEL_RT_MEMREF(int64_t, desc));   \
  void tessel_rt_collective_wait_##suffix(TESSEL_RT_MEMREF(T, in),             \
                                          TESSEL_RT_MEMREF(T, out),            \
                                          TESSEL_RT_MEMREF(int64_t, desc));    \
  void tessel_rt_send_##suffix(TESSEL_RT_MEMREF(T, in),                        \
                               TESSEL_RT_MEMREF(int64_t, desc));               \
  void tessel_rt_recv_##suffix(TESSEL_RT_MEMREF(T, out),                       \
                               TESSEL_RT_MEMREF(int64_t, desc));
TESSEL_RT_DECLARE_COLLECTIVE(f32, float)
TESSEL_RT_DECLARE_COLLECTIVE(f64, double)
TESSEL_RT_DECLARE_COLLECTIVE(bf16, uint16_t)
TESSEL_RT_DECLARE_COLLECTIVE(f16, uint16_t)
TESSEL_RT_DECLARE_COLLECTIVE(i64, int64_t)
TESSEL_RT_DECLARE_COLLECTIVE(i32, int32_t)
TESSEL_RT_DECLARE_COLLECTIVE(i1, uint8_t)
#undef TESSEL_RT_DECLARE_COLLECTIVE

/* This rank's index in the communicator group `group`. */
int64_t tessel_rt_axis_index(int64_t group);
/* From here to the next call (or the entry's return) the program runs
 * region `index` of its entry's "regions" (tessel.region): a span of the
 * trace. */
void tessel_rt_region(int64_t index);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_RUNTIME_ABI_H */
