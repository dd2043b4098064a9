//===- MpiCommunicator.cpp - ranks as MPI processes -----------------------===//
//
// One process per rank (mpirun -np N ./program). A group's communicator is
// created the first time the group is used, with MPI_Comm_create_group,
// which only the group's members call (they reach their first collective on
// it together, as SPMD programs do). Reductions use MPI's; 16-bit floats go
// through f32. A failing rank calls MPI_Abort, which ends every rank.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Communicator.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <thread>

#ifdef TESSEL_HAVE_MPI
// The C API only (no deprecated C++ bindings to link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

using namespace tessel;
using namespace tessel::rt;

bool rt::launchedByMpi() {
  for (const char *var :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var))
      return true;
  return false;
}

#ifndef TESSEL_HAVE_MPI

int rt::runMpiRank(std::chrono::seconds,
                   const std::function<int(Communicator &)> &) {
  llvm::errs() << "error: this program was started by an MPI launcher, but "
                  "libtessel_rt was built without MPI; install OpenMPI "
                  "(libopenmpi-dev) and rebuild\n";
  return 1;
}

#else

namespace {

/// Marks the time a collective starts; a watchdog thread aborts the job when
/// one takes longer than the timeout (a peer hung or died silently), since
/// MPI collectives themselves wait forever.
class Watchdog {
public:
  Watchdog(std::chrono::seconds timeout, int64_t rank)
      : timeout(timeout), rank(rank), thread([this] { watch(); }) {}
  ~Watchdog() {
    stop = true;
    thread.join();
  }
  void enter() { since = now(); }
  void leave() { since = 0; }

private:
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void watch() {
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int64_t start = since;
      if (start && now() - start > timeout.count() * 1000) {
        llvm::errs() << ("error: rank " + std::to_string(rank) +
                         ": a collective waited more than " +
                         std::to_string(timeout.count()) +
                         " s for the other ranks; another rank failed or is "
                         "stuck\n");
        llvm::errs().flush();
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
      }
    }
  }
  std::chrono::seconds timeout;
  int64_t rank;
  std::atomic<int64_t> since{0};
  std::atomic<bool> stop{false};
  std::thread thread;
};

MPI_Op mpiOpOf(ReduceOp op) {
  return op == ReduceOp::Sum   ? MPI_SUM
         : op == ReduceOp::Max ? MPI_MAX
                               : MPI_MIN;
}

/// The MPI type of `type`, or MPI_FLOAT for the types reduced through f32
/// (16-bit floats and i1, which MPI lacks).
MPI_Datatype mpiTypeOf(DType type) {
  switch (type) {
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  default:
    return MPI_FLOAT;
  }
}

bool reducedThroughF32(DType type) {
  return type == DType::BF16 || type == DType::F16 || type == DType::I1;
}

std::vector<float> widen(const void *in, int64_t count, DType type) {
  std::vector<float> wide(count);
  int64_t width = byteSize(type);
  for (int64_t k = 0; k < count; ++k) {
    double f;
    int64_t i;
    loadElement(type, static_cast<const uint8_t *>(in) + k * width, f, i);
    wide[k] = isFloat(type) ? float(f) : float(i);
  }
  return wide;
}

void narrow(const std::vector<float> &wide, void *out, DType type) {
  int64_t width = byteSize(type);
  for (size_t k = 0; k < wide.size(); ++k)
    storeElement(type, wide[k], int64_t(wide[k]),
                 static_cast<uint8_t *>(out) + k * width);
}

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(std::chrono::seconds timeout) {
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    me = r;
    worldSize = n;
    watchdog = std::make_unique<Watchdog>(timeout, me);
  }
  ~MpiCommunicator() override {
    for (auto &[members, comm] : comms)
      if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
  }
  int64_t rank() const override { return me; }
  int64_t size() const override { return worldSize; }
  std::string backend() const override { return "mpi"; }

  void allReduce(const void *in, void *out, int64_t count, DType type,
                 ReduceOp op, const std::vector<int64_t> &group) override {
    Watched w(*watchdog);
    MPI_Comm comm = commOf(group);
    if (reducedThroughF32(type)) {
      std::vector<float> wide = widen(in, count, type);
      check(MPI_Allreduce(MPI_IN_PLACE, wide.data(), int(count), MPI_FLOAT,
                          mpiOpOf(op), comm),
            "MPI_Allreduce");
      return narrow(wide, out, type);
    }
    check(
        MPI_Allreduce(in, out, int(count), mpiTypeOf(type), mpiOpOf(op), comm),
        "MPI_Allreduce");
  }

  void reduceScatter(const void *in, void *out, int64_t count, DType type,
                     ReduceOp op, const std::vector<int64_t> &group) override {
    Watched w(*watchdog);
    MPI_Comm comm = commOf(group);
    if (reducedThroughF32(type)) {
      std::vector<float> wide = widen(in, count * group.size(), type),
                         mine(count);
      check(MPI_Reduce_scatter_block(wide.data(), mine.data(), int(count),
                                     MPI_FLOAT, mpiOpOf(op), comm),
            "MPI_Reduce_scatter_block");
      return narrow(mine, out, type);
    }
    check(MPI_Reduce_scatter_block(in, out, int(count), mpiTypeOf(type),
                                   mpiOpOf(op), comm),
          "MPI_Reduce_scatter_block");
  }

  void allGather(const void *in, void *out, int64_t bytes,
                 const std::vector<int64_t> &group) override {
    Watched w(*watchdog);
    check(MPI_Allgather(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE,
                        commOf(group)),
          "MPI_Allgather");
  }

  void allToAll(const void *in, void *out, int64_t bytes,
                const std::vector<int64_t> &group) override {
    Watched w(*watchdog);
    check(MPI_Alltoall(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE,
                       commOf(group)),
          "MPI_Alltoall");
  }

  void permute(const void *in, void *out, int64_t bytes,
               const std::vector<int64_t> &pairs,
               const std::vector<int64_t> &group) override {
    Watched w(*watchdog);
    MPI_Comm comm = commOf(group);
    int index = 0;
    MPI_Comm_rank(comm, &index);
    std::memset(out, 0, bytes);
    std::vector<MPI_Request> requests;
    for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
      if (pairs[k] == index) {
        requests.emplace_back();
        check(MPI_Isend(in, int(bytes), MPI_BYTE, int(pairs[k + 1]), 7, comm,
                        &requests.back()),
              "MPI_Isend");
      }
      if (pairs[k + 1] == index) {
        requests.emplace_back();
        check(MPI_Irecv(out, int(bytes), MPI_BYTE, int(pairs[k]), 7, comm,
                        &requests.back()),
              "MPI_Irecv");
      }
    }
    check(
        MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  }

  void gatherToRoot(const void *in, void *out, int64_t bytes) override {
    Watched w(*watchdog);
    check(MPI_Gather(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, 0,
                     MPI_COMM_WORLD),
          "MPI_Gather");
  }

  void barrier() override {
    Watched w(*watchdog);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  [[noreturn]] void fail(const std::string &message) override {
    // One write, so lines of other ranks cannot cut into it.
    llvm::errs() << ("error: rank " + std::to_string(me) + ": " + message +
                     "\n");
    llvm::errs().flush();
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

private:
  struct Watched {
    explicit Watched(Watchdog &w) : w(w) { w.enter(); }
    ~Watched() { w.leave(); }
    Watchdog &w;
  };

  void check(int rc, const char *what) {
    if (rc == MPI_SUCCESS)
      return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    fail(std::string(what) + " failed: " + std::string(text, length));
  }

  MPI_Comm commOf(const std::vector<int64_t> &members) {
    auto it = comms.find(members);
    if (it != comms.end())
      return it->second;
    MPI_Comm comm;
    if (int64_t(members.size()) == worldSize &&
        std::is_sorted(members.begin(), members.end())) {
      comm = MPI_COMM_WORLD;
    } else {
      MPI_Group world, group;
      MPI_Comm_group(MPI_COMM_WORLD, &world);
      std::vector<int> ranks(members.begin(), members.end());
      MPI_Group_incl(world, int(ranks.size()), ranks.data(), &group);
      check(MPI_Comm_create_group(MPI_COMM_WORLD, group, 0, &comm),
            "MPI_Comm_create_group");
      MPI_Group_free(&group);
      MPI_Group_free(&world);
    }
    comms[members] = comm;
    return comm;
  }

  int64_t me = 0, worldSize = 1;
  std::map<std::vector<int64_t>, MPI_Comm> comms;
  std::unique_ptr<Watchdog> watchdog;
};

} // namespace

int rt::runMpiRank(std::chrono::seconds timeout,
                   const std::function<int(Communicator &)> &body) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  // Errors come back as codes and become a message and MPI_Abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc;
  {
    MpiCommunicator comm(timeout);
    rc = body(comm);
    if (rc)
      comm.fail("stopped");
  }
  MPI_Finalize();
  return rc;
}

#endif
