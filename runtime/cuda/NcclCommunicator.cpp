//===- NcclCommunicator.cpp - ranks as processes, one GPU each, over NCCL -===//
//
// The Communicator of a run a launcher (mpirun, srun, torchrun) started one
// process per GPU. NCCL is loaded when the run starts (dlopen: the
// executable links neither NCCL nor MPI) from TESSEL_NCCL_LIBRARY, the
// library path, or an installed `nvidia-nccl` Python package. The ranks
// meet over TCP at rank 0 (tessel/runtime/Bootstrap.h), which hands out
// NCCL's unique id; groups are ncclCommSplit of the world communicator.
//
// Streams: collectives run on a communication stream of their own, after
// an event that orders them behind the compute stream's work; each request
// is an event recorded behind its collective, so the host waits only where
// the runtime asks. A wait past the limit (--timeout) aborts every NCCL
// communicator of the process and stops the run naming the rank: NCCL
// itself would wait forever on a dead peer.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Device.h"
#include "CudaCheck.h"
#include "CudaTimeline.h"

#include "tessel/runtime/Bootstrap.h"
#include "tessel/runtime/Communicator.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cuda_runtime_api.h>

#ifndef TESSEL_HAVE_NCCL

// Built without NCCL's header: process-per-GPU runs are refused.
bool tessel::rt::deviceHasCommunicator() { return true; }

int tessel::rt::runProcessRank(const LaunchInfo &info, std::chrono::seconds,
                               const std::function<int(Communicator &)> &) {
  llvm::errs() << "error: rank " << info.rank
               << ": this program's runtime was built without NCCL (nccl.h "
                  "was not found next to the CUDA toolkit), so it runs its "
                  "ranks as threads of one process only\n";
  return 1;
}

#else

#include "NcclLibrary.h"

#include <algorithm>
#include <thread>

using namespace tessel;
using namespace tessel::rt;

namespace {

ncclDataType_t ncclTypeOf(DType t) {
  switch (t) {
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::I1:
    return ncclUint8;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  }
  return ncclUint8;
}

ncclRedOp_t ncclOpOf(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  }
  return ncclSum;
}

class NcclGroup : public Group {
public:
  NcclGroup(std::vector<int64_t> ranks, int64_t index, ncclComm_t comm)
      : Group(std::move(ranks), index), comm(comm) {}
  ncclComm_t comm;
};

/// An operation in flight: the event recorded behind it.
class NcclOperation : public PendingOperation {
public:
  ~NcclOperation() override {
    if (done)
      cudaEventDestroy(done);
  }
  cudaEvent_t done = nullptr;
};

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(const LaunchInfo &info, const Nccl &nccl,
                   std::unique_ptr<TcpStore> store, std::chrono::seconds limit)
      : info(info), nccl(nccl), store(std::move(store)), limit(limit) {}

  /// Creates the world communicator: rank 0's unique id through the store.
  llvm::Error init() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
    ncclUniqueId id{};
    if (info.rank == 0)
      checkNccl(nccl.ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::string bytes(reinterpret_cast<const char *>(&id), sizeof(id));
    if (llvm::Error err = store->broadcast(bytes))
      return err;
    std::memcpy(&id, bytes.data(), std::min(bytes.size(), sizeof(id)));
    ncclComm_t comm;
    checkNccl(nccl.ncclCommInitRank(&comm, int(info.size), id, int(info.rank)),
              "ncclCommInitRank");
    std::vector<int64_t> all(size_t(info.size));
    for (int64_t r = 0; r < info.size; ++r)
      all[size_t(r)] = r;
    everyone = std::make_unique<NcclGroup>(all, info.rank, comm);
    comms.push_back(comm);
    return llvm::Error::success();
  }

  ~NcclCommunicator() override {
    for (ncclComm_t c : comms)
      nccl.ncclCommDestroy(c);
    if (stream)
      cudaStreamDestroy(stream);
  }

  int64_t rank() const override { return info.rank; }
  int64_t size() const override { return info.size; }
  std::string backend() const override { return "nccl"; }
  const Group &world() const override { return *everyone; }

  std::unique_ptr<Group> split(int64_t color, int64_t key) override {
    // Every rank learns the colours and keys, so each knows its group's
    // world ranks in order (NCCL does not say).
    std::string mine = std::to_string(color) + " " + std::to_string(key);
    llvm::Expected<std::vector<std::string>> all = store->allGather(mine);
    if (!all)
      fail(llvm::toString(all.takeError()));
    ncclComm_t comm = nullptr;
    checkNccl(nccl.ncclCommSplit(everyone->comm,
                                 color < 0 ? NCCL_SPLIT_NOCOLOR : int(color),
                                 int(key), &comm, nullptr),
              "ncclCommSplit");
    if (color < 0)
      return nullptr;
    std::vector<std::pair<int64_t, int64_t>> members; // (key, rank)
    for (auto [r, text] : llvm::enumerate(*all)) {
      auto [c, k] = llvm::StringRef(text).split(' ');
      int64_t cc = 0, kk = 0;
      c.getAsInteger(10, cc);
      k.getAsInteger(10, kk);
      if (cc == color)
        members.push_back({kk, int64_t(r)});
    }
    std::sort(members.begin(), members.end());
    std::vector<int64_t> ranks;
    int64_t index = 0;
    for (auto [k, r] : members) {
      if (r == info.rank)
        index = int64_t(ranks.size());
      ranks.push_back(r);
    }
    comms.push_back(comm);
    return std::make_unique<NcclGroup>(ranks, index, comm);
  }

  Request startAllReduce(const void *in, void *out, int64_t count, DType type,
                         ReduceOp op, const Group &g) override {
    return launch("all_reduce", count * byteSize(type), [&] {
      checkNccl(nccl.ncclAllReduce(in, out, size_t(count), ncclTypeOf(type),
                                   ncclOpOf(op), commOf(g), stream),
                "ncclAllReduce");
    });
  }
  Request startReduceScatter(const void *in, void *out, int64_t count,
                             DType type, ReduceOp op, const Group &g) override {
    return launch("reduce_scatter", count * byteSize(type), [&] {
      checkNccl(nccl.ncclReduceScatter(in, out, size_t(count),
                                       ncclTypeOf(type), ncclOpOf(op),
                                       commOf(g), stream),
                "ncclReduceScatter");
    });
  }
  Request startAllGather(const void *in, void *out, int64_t bytes,
                         const Group &g) override {
    return launch("all_gather", bytes, [&] {
      checkNccl(nccl.ncclAllGather(in, out, size_t(bytes), ncclUint8,
                                   commOf(g), stream),
                "ncclAllGather");
    });
  }
  Request startAllToAll(const void *in, void *out, int64_t bytes,
                        const Group &g) override {
    return launch("all_to_all", bytes * g.size(), [&] {
      checkNccl(nccl.ncclGroupStart(), "ncclGroupStart");
      for (int64_t p = 0; p < g.size(); ++p) {
        const char *src = static_cast<const char *>(in) + p * bytes;
        char *dst = static_cast<char *>(out) + p * bytes;
        checkNccl(nccl.ncclSend(src, size_t(bytes), ncclUint8, int(p),
                                commOf(g), stream),
                  "ncclSend");
        checkNccl(nccl.ncclRecv(dst, size_t(bytes), ncclUint8, int(p),
                                commOf(g), stream),
                  "ncclRecv");
      }
      checkNccl(nccl.ncclGroupEnd(), "ncclGroupEnd");
    });
  }
  Request startPermute(const void *in, void *out, int64_t bytes,
                       const std::vector<int64_t> &pairs,
                       const Group &g) override {
    return launch("permute", bytes, [&] {
      check(cudaMemsetAsync(out, 0, size_t(bytes), stream), "cudaMemsetAsync");
      checkNccl(nccl.ncclGroupStart(), "ncclGroupStart");
      for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
        int64_t source = pairs[k], target = pairs[k + 1];
        if (source == g.index() && target == g.index())
          check(cudaMemcpyAsync(out, in, size_t(bytes), cudaMemcpyDefault,
                                stream),
                "cudaMemcpyAsync");
        else if (source == g.index())
          checkNccl(nccl.ncclSend(in, size_t(bytes), ncclUint8, int(target),
                                  commOf(g), stream),
                    "ncclSend");
        else if (target == g.index())
          checkNccl(nccl.ncclRecv(out, size_t(bytes), ncclUint8, int(source),
                                  commOf(g), stream),
                    "ncclRecv");
      }
      checkNccl(nccl.ncclGroupEnd(), "ncclGroupEnd");
    });
  }
  // NCCL matches a pair's sends and receives in the order they are
  // issued; the runtime issues them in the schedule's order on both sides,
  // so the tag is not needed to match them.
  Request startSend(const void *in, int64_t bytes, int64_t peer, int64_t,
                    const Group &g) override {
    return launch("send", bytes, [&] {
      checkNccl(nccl.ncclSend(in, size_t(bytes), ncclUint8, int(peer),
                              commOf(g), stream),
                "ncclSend");
    });
  }
  Request startRecv(void *out, int64_t bytes, int64_t peer, int64_t,
                    const Group &g) override {
    return launch("recv", bytes, [&] {
      checkNccl(nccl.ncclRecv(out, size_t(bytes), ncclUint8, int(peer),
                              commOf(g), stream),
                "ncclRecv");
    });
  }

  void wait(Request &request) override {
    auto *op = static_cast<NcclOperation *>(request.pending());
    if (!op)
      return;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      cudaError_t status = cudaEventQuery(op->done);
      if (status == cudaSuccess)
        break;
      if (status != cudaErrorNotReady)
        fail(std::string("a collective failed on the GPU: ") +
             cudaGetErrorString(status));
      for (ncclComm_t c : comms) {
        ncclResult_t async = ncclSuccess;
        nccl.ncclCommGetAsyncError(c, &async);
        if (async != ncclSuccess && async != ncclInProgress)
          fail(std::string("NCCL failed: ") + nccl.ncclGetErrorString(async));
      }
      if (std::chrono::steady_clock::now() > deadline)
        fail(llvm::formatv("a collective did not complete within {0} s (a "
                           "rank stopped or hangs; --timeout sets the limit)",
                           limit.count()));
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    if (DeviceTimeline *spans = cuda::timeline())
      spans->collect(currentRank(), /*wait=*/false);
    request.reset();
  }

  void gatherToRoot(const void *in, void *out, int64_t bytes) override {
    std::string mine(static_cast<const char *>(in), size_t(bytes));
    llvm::Expected<std::vector<std::string>> all = store->gather(mine);
    if (!all)
      fail(llvm::toString(all.takeError()));
    if (info.rank == 0)
      for (auto [r, text] : llvm::enumerate(*all))
        std::memcpy(static_cast<char *>(out) + r * size_t(bytes), text.data(),
                    std::min(text.size(), size_t(bytes)));
  }
  void barrier() override {
    if (llvm::Error err = store->barrier())
      fail(llvm::toString(std::move(err)));
  }
  std::chrono::seconds setWaitLimit(std::chrono::seconds l) override {
    std::chrono::seconds old = limit;
    limit = l;
    store->setTimeout(l);
    return old;
  }
  [[noreturn]] void fail(const std::string &message) override {
    llvm::errs() << ("error: rank " + std::to_string(info.rank) + ": " +
                     message + "\n");
    llvm::errs().flush();
    for (ncclComm_t c : comms)
      nccl.ncclCommAbort(c);
    std::_Exit(1);
  }

private:
  ncclComm_t commOf(const Group &g) {
    return static_cast<const NcclGroup &>(g).comm;
  }
  /// Orders `issue`'s work on the communication stream behind what the
  /// compute stream has queued, and returns its request. With --trace the
  /// work is a span of the rank's communication stream ("WHAT N B").
  template <typename F>
  Request launch(const char *what, int64_t bytes, F issue) {
    cudaEvent_t ready;
    check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
          "cudaEventCreate");
    check(cudaEventRecord(ready, cudaStreamPerThread), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
    DeviceTimeline *spans = cuda::timeline();
    if (spans)
      spans->begin(currentRank(), stream,
                   std::string(what) + " " + std::to_string(bytes) + " B",
                   "communication", TraceEvent::kDeviceCommunication);
    issue();
    if (spans)
      spans->end();
    auto op = std::make_shared<NcclOperation>();
    check(cudaEventCreateWithFlags(&op->done, cudaEventDisableTiming),
          "cudaEventCreate");
    check(cudaEventRecord(op->done, stream), "cudaEventRecord");
    return Request(op);
  }
  void check(cudaError_t status, const char *what) {
    if (status != cudaSuccess)
      fail(std::string(what) + " failed: " + cudaGetErrorString(status));
  }
  void checkNccl(ncclResult_t status, const char *what) {
    if (status != ncclSuccess && status != ncclInProgress)
      fail(std::string(what) + " failed: " + nccl.ncclGetErrorString(status));
  }

  LaunchInfo info;
  const Nccl &nccl;
  std::unique_ptr<TcpStore> store;
  std::chrono::seconds limit;
  cudaStream_t stream = nullptr;
  std::unique_ptr<NcclGroup> everyone;
  std::vector<ncclComm_t> comms;
};

} // namespace

bool tessel::rt::deviceHasCommunicator() { return true; }

int tessel::rt::runProcessRank(const LaunchInfo &info,
                               std::chrono::seconds timeout,
                               const std::function<int(Communicator &)> &body) {
  auto stop = [&](const std::string &why) {
    llvm::errs() << ("error: rank " + std::to_string(info.rank) + ": " + why +
                     "\n");
    return 1;
  };
  llvm::Expected<const Nccl *> nccl = loadNccl();
  if (!nccl)
    return stop(llvm::toString(nccl.takeError()));
  // The GPU first: NCCL binds its communicators to the current device.
  if (std::string why = bindRankDevice(info.localRank); !why.empty())
    return stop(why);
  llvm::Expected<std::unique_ptr<TcpStore>> store =
      TcpStore::connect(info, timeout);
  if (!store)
    return stop(llvm::toString(store.takeError()));
  NcclCommunicator comm(info, **nccl, std::move(*store), timeout);
  if (llvm::Error err = comm.init())
    return stop(llvm::toString(std::move(err)));
  return body(comm);
}

#endif // TESSEL_HAVE_NCCL
