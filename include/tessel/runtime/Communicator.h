//===- Communicator.h - collectives between the ranks of a run --*- C++ -*-===//
//
// One interface, several backends: ranks as threads of one process (the
// default on one machine) and, later, MPI processes and NCCL. A group is the
// list of global ranks taking part, in group-index order (mesh groups, see
// support/Mesh.h). Every rank of a group calls the same collectives in the
// same order. The primitives move flat bytes; the shape-aware collectives
// (gather along a dimension, ...) are built on them in runtime/cpu/Kernels.cpp.
//
// A collective that cannot complete (a rank died or hung past the timeout)
// does not return: the process reports which rank and exits non-zero, so no
// rank hangs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_COMMUNICATOR_H
#define TESSEL_RUNTIME_COMMUNICATOR_H

#include "tessel/support/DType.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessel::rt {

enum class ReduceOp { Sum, Max, Min };

class Communicator {
public:
  virtual ~Communicator();
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  virtual std::string backend() const = 0;

  /// out = element-wise reduction (in group order) of every member's `in`.
  virtual void allReduce(const void *in, void *out, int64_t count, DType type,
                         ReduceOp op, const std::vector<int64_t> &group) = 0;
  /// `in` holds one block of `count` elements per member; out = the
  /// element-wise reduction of every member's block at this member's index.
  virtual void reduceScatter(const void *in, void *out, int64_t count,
                             DType type, ReduceOp op,
                             const std::vector<int64_t> &group) = 0;
  /// out = concatenation of every member's `bytes` of `in`, in group order.
  virtual void allGather(const void *in, void *out, int64_t bytes,
                         const std::vector<int64_t> &group) = 0;
  /// `in` holds one block of `bytes` per member; out = this member's block of
  /// every member, in group order.
  virtual void allToAll(const void *in, void *out, int64_t bytes,
                        const std::vector<int64_t> &group) = 0;
  /// `out` = the `in` of the member whose pair targets this one (group
  /// indices, (source, target) pairs), or zeros.
  virtual void permute(const void *in, void *out, int64_t bytes,
                       const std::vector<int64_t> &pairs,
                       const std::vector<int64_t> &group) = 0;
  /// Rank 0 receives every rank's `bytes` of `in` in `out` (by rank);
  /// `out` is ignored elsewhere.
  virtual void gatherToRoot(const void *in, void *out, int64_t bytes) = 0;
  virtual void barrier() = 0;
  /// Stops every rank: `message` is printed with this rank's number.
  [[noreturn]] virtual void fail(const std::string &message) = 0;
};

/// Ranks as threads: call `body(comm)` on `ranks` threads and join them.
/// Returns the first non-zero result of a rank, or 0.
int runThreadRanks(int64_t ranks, std::chrono::seconds timeout,
                   const std::function<int(Communicator &)> &body);

/// Whether this process was started by an MPI launcher (mpirun, srun).
bool launchedByMpi();

/// Ranks as MPI processes: initializes MPI, calls `body(comm)` on this
/// process's rank, finalizes. Exits with an error when MPI support is not
/// built in.
int runMpiRank(std::chrono::seconds timeout,
               const std::function<int(Communicator &)> &body);

/// Reduces `count` elements of `src` into `dst` (dst = dst op src).
void reduceInto(void *dst, const void *src, int64_t count, DType type,
                ReduceOp op);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_COMMUNICATOR_H
