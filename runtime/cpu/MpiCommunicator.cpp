//===- MpiCommunicator.cpp - ranks as MPI processes -----------------------===//
//
// One process per rank (mpirun -np N ./program). Groups are MPI
// communicators made by MPI_Comm_split; every operation is MPI's
// non-blocking form (MPI_Iallreduce, MPI_Isend, ...) and `wait` is
// MPI_Waitall. Reductions use MPI's; 16-bit floats and i1 go through f32 and
// are narrowed when the operation completes. A failing rank calls MPI_Abort,
// which ends every rank.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Communicator.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
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

/// Marks the time a wait starts; a watchdog thread aborts the job when one
/// takes longer than the timeout (a peer hung or died silently), since MPI
/// itself waits forever.
class Watchdog {
public:
  Watchdog(std::chrono::seconds timeout, int64_t rank)
      : seconds(timeout.count()), rank(rank), thread([this] { watch(); }) {}
  ~Watchdog() {
    stop = true;
    thread.join();
  }
  void enter() { since = now(); }
  void leave() { since = 0; }
  std::chrono::seconds setTimeout(std::chrono::seconds t) {
    return std::chrono::seconds(seconds.exchange(t.count()));
  }

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
      int64_t limit = seconds;
      if (start && now() - start > limit * 1000) {
        llvm::errs() << ("error: rank " + std::to_string(rank) +
                         ": a collective or transfer waited more than " +
                         std::to_string(limit) +
                         " s for the other ranks; another rank failed or is "
                         "stuck\n");
        llvm::errs().flush();
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
      }
    }
  }
  std::atomic<int64_t> seconds; ///< the limit
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

void narrow(const float *wide, int64_t count, void *out, DType type) {
  int64_t width = byteSize(type);
  for (int64_t k = 0; k < count; ++k)
    storeElement(type, wide[k], int64_t(wide[k]),
                 static_cast<uint8_t *>(out) + k * width);
}

class MpiGroup final : public Group {
public:
  MpiGroup(std::vector<int64_t> ranks, int64_t index, MPI_Comm comm)
      : Group(std::move(ranks), index), comm(comm) {}
  ~MpiGroup() override {
    if (comm != MPI_COMM_WORLD)
      MPI_Comm_free(&comm);
  }
  MPI_Comm comm;
};

/// MPI's requests of one operation and what completes it afterwards.
struct MpiOperation final : PendingOperation {
  std::vector<MPI_Request> requests;
  std::vector<float> wide; ///< f32 staging of 16-bit floats and i1
  std::function<void()> finish;
};

/// Tags: point-to-point tags are the caller's; permutes use their own.
constexpr int kPermuteTag = 32767;

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(std::chrono::seconds timeout) {
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    me = r;
    worldSize = n;
    std::vector<int64_t> all(n);
    for (int k = 0; k < n; ++k)
      all[k] = k;
    everyone = std::make_unique<MpiGroup>(std::move(all), me, MPI_COMM_WORLD);
    watchdog = std::make_unique<Watchdog>(timeout, me);
  }
  int64_t rank() const override { return me; }
  int64_t size() const override { return worldSize; }
  std::string backend() const override { return "mpi"; }
  const Group &world() const override { return *everyone; }

  std::unique_ptr<Group> split(int64_t color, int64_t key) override {
    MPI_Comm comm;
    check(MPI_Comm_split(MPI_COMM_WORLD,
                         color < 0 ? MPI_UNDEFINED : toInt(color, "colour"),
                         toInt(key, "key"), &comm),
          "MPI_Comm_split");
    if (comm == MPI_COMM_NULL)
      return nullptr;
    int n, index;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &index);
    // World ranks by group index.
    MPI_Group worldGroup, group;
    MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
    MPI_Comm_group(comm, &group);
    std::vector<int> local(n), global(n);
    for (int k = 0; k < n; ++k)
      local[k] = k;
    MPI_Group_translate_ranks(group, n, local.data(), worldGroup,
                              global.data());
    MPI_Group_free(&group);
    MPI_Group_free(&worldGroup);
    return std::make_unique<MpiGroup>(
        std::vector<int64_t>(global.begin(), global.end()), index, comm);
  }

  Request startAllReduce(const void *in, void *out, int64_t count, DType type,
                         ReduceOp op, const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    MPI_Request &r = p->requests.emplace_back();
    int n = toInt(count, "element count");
    if (reducedThroughF32(type)) {
      p->wide = widen(in, count, type);
      check(MPI_Iallreduce(MPI_IN_PLACE, p->wide.data(), n, MPI_FLOAT,
                           mpiOpOf(op), commOf(g), &r),
            "MPI_Iallreduce");
      MpiOperation *raw = p.get();
      p->finish = [=] { narrow(raw->wide.data(), count, out, type); };
    } else {
      check(MPI_Iallreduce(in, out, n, mpiTypeOf(type), mpiOpOf(op), commOf(g),
                           &r),
            "MPI_Iallreduce");
    }
    return Request(p);
  }

  Request startReduceScatter(const void *in, void *out, int64_t count,
                             DType type, ReduceOp op, const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    MPI_Request &r = p->requests.emplace_back();
    int n = toInt(count, "element count");
    if (reducedThroughF32(type)) {
      p->wide = widen(in, count * g.size(), type);
      // In place: the result lands in the first `count` elements.
      check(MPI_Ireduce_scatter_block(MPI_IN_PLACE, p->wide.data(), n,
                                      MPI_FLOAT, mpiOpOf(op), commOf(g), &r),
            "MPI_Ireduce_scatter_block");
      MpiOperation *raw = p.get();
      p->finish = [=] { narrow(raw->wide.data(), count, out, type); };
    } else {
      check(MPI_Ireduce_scatter_block(in, out, n, mpiTypeOf(type), mpiOpOf(op),
                                      commOf(g), &r),
            "MPI_Ireduce_scatter_block");
    }
    return Request(p);
  }

  Request startAllGather(const void *in, void *out, int64_t bytes,
                         const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    int n = toInt(bytes, "byte count");
    check(MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, commOf(g),
                         &p->requests.emplace_back()),
          "MPI_Iallgather");
    return Request(p);
  }

  Request startAllToAll(const void *in, void *out, int64_t bytes,
                        const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    int n = toInt(bytes, "byte count");
    check(MPI_Ialltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, commOf(g),
                        &p->requests.emplace_back()),
          "MPI_Ialltoall");
    return Request(p);
  }

  Request startPermute(const void *in, void *out, int64_t bytes,
                       const std::vector<int64_t> &pairs,
                       const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    int n = toInt(bytes, "byte count");
    std::memset(out, 0, bytes);
    for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
      if (pairs[k] == g.index())
        check(MPI_Isend(in, n, MPI_BYTE, int(pairs[k + 1]), kPermuteTag,
                        commOf(g), &p->requests.emplace_back()),
              "MPI_Isend");
      if (pairs[k + 1] == g.index())
        check(MPI_Irecv(out, n, MPI_BYTE, int(pairs[k]), kPermuteTag,
                        commOf(g), &p->requests.emplace_back()),
              "MPI_Irecv");
    }
    return Request(p);
  }

  Request startSend(const void *in, int64_t bytes, int64_t peer, int64_t tag,
                    const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    check(MPI_Isend(in, toInt(bytes, "byte count"), MPI_BYTE,
                    peerOf(g, peer), tagOf(tag), commOf(g),
                    &p->requests.emplace_back()),
          "MPI_Isend");
    return Request(p);
  }

  Request startRecv(void *out, int64_t bytes, int64_t peer, int64_t tag,
                    const Group &g) override {
    auto p = std::make_shared<MpiOperation>();
    check(MPI_Irecv(out, toInt(bytes, "byte count"), MPI_BYTE,
                    peerOf(g, peer), tagOf(tag), commOf(g),
                    &p->requests.emplace_back()),
          "MPI_Irecv");
    return Request(p);
  }

  void wait(Request &request) override {
    auto *p = static_cast<MpiOperation *>(request.pending());
    if (!p)
      return;
    {
      Watched w(*watchdog);
      check(MPI_Waitall(int(p->requests.size()), p->requests.data(),
                        MPI_STATUSES_IGNORE),
            "MPI_Waitall");
    }
    if (p->finish)
      p->finish();
    request.reset();
  }

  void gatherToRoot(const void *in, void *out, int64_t bytes) override {
    Watched w(*watchdog);
    int n = toInt(bytes, "byte count");
    check(MPI_Gather(in, n, MPI_BYTE, out, n, MPI_BYTE, 0, MPI_COMM_WORLD),
          "MPI_Gather");
  }

  void barrier() override {
    Watched w(*watchdog);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  std::chrono::seconds setWaitLimit(std::chrono::seconds limit) override {
    return watchdog->setTimeout(limit);
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

  /// MPI counts are int: larger ones are refused rather than truncated.
  int toInt(int64_t value, const char *what) {
    if (value < INT_MIN || value > INT_MAX)
      fail(std::string("an MPI ") + what + " of " + std::to_string(value) +
           " does not fit in an int");
    return int(value);
  }

  int tagOf(int64_t tag) {
    if (tag < 0 || tag >= kPermuteTag)
      fail("point-to-point tag " + std::to_string(tag) +
           " is outside 0.." + std::to_string(kPermuteTag - 1));
    return int(tag);
  }

  int peerOf(const Group &g, int64_t peer) {
    if (peer < 0 || peer >= g.size())
      fail("point-to-point peer " + std::to_string(peer) +
           " is outside its group of " + std::to_string(g.size()));
    return int(peer);
  }

  MPI_Comm commOf(const Group &g) {
    auto *group = dynamic_cast<const MpiGroup *>(&g);
    if (!group)
      fail("internal error: a group of another backend");
    return group->comm;
  }

  int64_t me = 0, worldSize = 1;
  std::unique_ptr<MpiGroup> everyone;
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
