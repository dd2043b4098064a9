//===- Communicator.h - collectives between the ranks of a run --*- C++ -*-===//
//
// One interface, several backends: ranks as threads of one process (the
// default on one machine), MPI processes, and (next) NCCL; docs/runtime.md
// maps each call onto MPI and NCCL one to one.
//
// * Groups are created once, at start-up, by every rank of the world
//   together (`split`, like MPI_Comm_split and ncclCommSplit): ranks passing
//   the same colour form one group, ordered by key. A compiled program's
//   groups are listed in its description; the runtime makes them before the
//   first step, so no collective builds a group.
// * Every operation is non-blocking: it starts and returns a `Request`, and
//   `wait` completes it. Buffers must stay valid, and outputs unread, until
//   then. Members of a group start the group's collectives in the same order
//   (SPMD), but may wait for them in any order. The blocking forms are
//   `wait(start...)`.
// * Point-to-point: `send` and `recv` name the peer by its index in a group;
//   messages between two ranks with the same tag arrive in order. A send may
//   complete before the receiver waits (the CPU backends buffer), so two
//   ranks may each send and then receive.
//
// Primitives move flat bytes; the shape-aware collectives (gather along a
// dimension, ...) are built on them in runtime/cpu/Kernels.cpp. An operation
// that cannot complete (a rank died or hung past the timeout) does not
// return: the process reports which rank and exits non-zero, so no rank
// hangs.
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

/// A set of ranks that communicate together, made by `Communicator::split`.
/// Backends derive from it to keep their own handle (an MPI communicator, an
/// ncclComm_t).
class Group {
public:
  explicit Group(std::vector<int64_t> ranks, int64_t index)
      : members(std::move(ranks)), myIndex(index) {}
  virtual ~Group();
  /// World ranks by group index.
  const std::vector<int64_t> &ranks() const { return members; }
  int64_t size() const { return int64_t(members.size()); }
  /// This rank's index in the group.
  int64_t index() const { return myIndex; }

private:
  std::vector<int64_t> members;
  int64_t myIndex;
};

/// What a backend keeps of an operation in flight.
class PendingOperation {
public:
  virtual ~PendingOperation();
};

/// An operation in flight; empty once complete (or when it never was).
class Request {
public:
  Request() = default;
  explicit Request(std::shared_ptr<PendingOperation> op) : op(std::move(op)) {}
  bool complete() const { return !op; }
  PendingOperation *pending() const { return op.get(); }
  void reset() { op.reset(); }

private:
  std::shared_ptr<PendingOperation> op;
};

class Communicator {
public:
  virtual ~Communicator();
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  virtual std::string backend() const = 0;
  /// Every rank of the run, in rank order.
  virtual const Group &world() const = 0;

  /// Collective over the world: the ranks passing the same `color` form a
  /// group, ordered by `key` (then by rank). A negative colour takes part
  /// in no group and gets null.
  virtual std::unique_ptr<Group> split(int64_t color, int64_t key) = 0;

  /// out = element-wise reduction (in group order) of every member's `in`.
  virtual Request startAllReduce(const void *in, void *out, int64_t count,
                                 DType type, ReduceOp op, const Group &g) = 0;
  /// `in` holds one block of `count` elements per member; out = the
  /// element-wise reduction of every member's block at this member's index.
  virtual Request startReduceScatter(const void *in, void *out, int64_t count,
                                     DType type, ReduceOp op,
                                     const Group &g) = 0;
  /// out = concatenation of every member's `bytes` of `in`, in group order.
  virtual Request startAllGather(const void *in, void *out, int64_t bytes,
                                 const Group &g) = 0;
  /// `in` holds one block of `bytes` per member; out = this member's block
  /// of every member, in group order.
  virtual Request startAllToAll(const void *in, void *out, int64_t bytes,
                                const Group &g) = 0;
  /// `out` = the `in` of the member whose pair targets this one (group
  /// indices, (source, target) pairs), or zeros.
  virtual Request startPermute(const void *in, void *out, int64_t bytes,
                               const std::vector<int64_t> &pairs,
                               const Group &g) = 0;
  /// Sends `bytes` of `in` to the member `peer` of `g`, matched by the
  /// peer's `startRecv` with this rank as source and the same tag.
  virtual Request startSend(const void *in, int64_t bytes, int64_t peer,
                            int64_t tag, const Group &g) = 0;
  virtual Request startRecv(void *out, int64_t bytes, int64_t peer,
                            int64_t tag, const Group &g) = 0;
  /// Completes `request` (a no-op when already complete) and empties it.
  virtual void wait(Request &request) = 0;
  void waitAll(std::vector<Request> &requests) {
    for (Request &r : requests)
      wait(r);
  }

  // Blocking forms.
  void allReduce(const void *in, void *out, int64_t count, DType type,
                 ReduceOp op, const Group &g) {
    finish(startAllReduce(in, out, count, type, op, g));
  }
  void reduceScatter(const void *in, void *out, int64_t count, DType type,
                     ReduceOp op, const Group &g) {
    finish(startReduceScatter(in, out, count, type, op, g));
  }
  void allGather(const void *in, void *out, int64_t bytes, const Group &g) {
    finish(startAllGather(in, out, bytes, g));
  }
  void allToAll(const void *in, void *out, int64_t bytes, const Group &g) {
    finish(startAllToAll(in, out, bytes, g));
  }
  void permute(const void *in, void *out, int64_t bytes,
               const std::vector<int64_t> &pairs, const Group &g) {
    finish(startPermute(in, out, bytes, pairs, g));
  }
  void send(const void *in, int64_t bytes, int64_t peer, int64_t tag,
            const Group &g) {
    finish(startSend(in, bytes, peer, tag, g));
  }
  void recv(void *out, int64_t bytes, int64_t peer, int64_t tag,
            const Group &g) {
    finish(startRecv(out, bytes, peer, tag, g));
  }

  /// Rank 0 receives every rank's `bytes` of `in` in `out` (by rank);
  /// `out` is ignored elsewhere.
  virtual void gatherToRoot(const void *in, void *out, int64_t bytes) = 0;
  virtual void barrier() = 0;
  /// How long this rank's waits may last before the run fails as stalled
  /// (--timeout at start); returns the previous limit. Checkpoints raise it
  /// while rank 0 writes: a slow disk is not a stuck rank.
  virtual std::chrono::seconds setWaitLimit(std::chrono::seconds limit) = 0;
  /// Stops every rank: `message` is printed with this rank's number.
  [[noreturn]] virtual void fail(const std::string &message) = 0;

private:
  void finish(Request request) { wait(request); }
};

/// The group of `ranks` (world ranks in group order) through `split`: every
/// rank of the world calls it with the same `partition`, the list of every
/// group being made (a rank in none of them gets null).
std::unique_ptr<Group>
splitByPartition(Communicator &comm,
                 const std::vector<std::vector<int64_t>> &partition);

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
