//===- Bootstrap.h - ranks started as processes, and their rendezvous -*- C++ -*-===//
//
// A compiled executable started once per device by a launcher learns its
// place from the launcher's environment, without linking the launcher's
// library: Open MPI's mpirun (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_*),
// MPICH/PMI (PMI_*) and torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). The processes then meet at
// rank 0 over TCP (`TcpStore`): small host messages (NCCL's unique id,
// barriers, a gather to rank 0), the way torchrun's store bootstraps NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_BOOTSTRAP_H
#define TESSEL_RUNTIME_BOOTSTRAP_H

#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::rt {

/// Where this process stands in a run of processes.
struct LaunchInfo {
  int64_t rank = 0, size = 1;
  int64_t localRank = 0, localSize = 1;
  std::string launcher; ///< "torchrun", "mpirun", "srun", "pmi"
  /// Rank 0's rendezvous address; empty when the launcher gave none.
  std::string host;
  int port = 0;
};

using EnvLookup = std::function<std::optional<std::string>(const char *)>;

/// The process environment.
std::optional<std::string> processEnv(const char *name);

/// The launch this process is part of, or nullopt when no launcher
/// variables are set (one process, ranks as threads); an error for
/// inconsistent or malformed variables. MASTER_ADDR / MASTER_PORT give the
/// rendezvous under any launcher; without them, a run whose ranks are all
/// on one machine meets at 127.0.0.1 on a port derived from the job
/// (TESSEL_PORT overrides it); across machines `host` stays empty and
/// TcpStore::connect says what to set (MPI's own processes need none).
llvm::Expected<std::optional<LaunchInfo>>
detectLaunch(const EnvLookup &env = processEnv);

/// Where to look for a runtime library (`soname`, e.g. "libnccl.so.2"), in
/// order: the file `overrideVar` names, the library path (the bare soname),
/// then `pipSubdir` (e.g. "nvidia/nccl/lib") of Python's package
/// directories: $VIRTUAL_ENV's and $CONDA_PREFIX's, the user's
/// (~/.local), the system's (/usr/local/lib, /usr/lib), each for every
/// python3.* there is.
std::vector<std::string> sharedLibraryCandidates(const char *soname,
                                                 const char *pipSubdir,
                                                 const char *overrideVar,
                                                 const EnvLookup &env = processEnv);

/// The launch detected at start-up (set once by the executable's main);
/// nullopt when the ranks are threads of this process.
const std::optional<LaunchInfo> &currentLaunch();
void setCurrentLaunch(std::optional<LaunchInfo> info);

/// Rank 0 listens; the others connect (retrying until `timeout`: rank 0
/// may start last). Every operation is collective over all ranks and fails
/// with a message naming the peer when one does not answer in time.
class TcpStore {
public:
  static llvm::Expected<std::unique_ptr<TcpStore>>
  connect(const LaunchInfo &info, std::chrono::seconds timeout);
  ~TcpStore();

  /// Rank 0's `data` on every rank.
  llvm::Error broadcast(std::string &data);
  /// On rank 0, every rank's `data` by rank; empty elsewhere.
  llvm::Expected<std::vector<std::string>> gather(const std::string &data);
  /// Every rank's `data` by rank, on every rank.
  llvm::Expected<std::vector<std::string>> allGather(const std::string &data);
  llvm::Error barrier();
  void setTimeout(std::chrono::seconds t) { timeout = t; }
  std::chrono::seconds getTimeout() const { return timeout; }

private:
  TcpStore(const LaunchInfo &info, std::chrono::seconds timeout)
      : info(info), timeout(timeout) {}
  llvm::Error sendTo(int fd, const std::string &data, int64_t peer);
  llvm::Error recvFrom(int fd, std::string &data, int64_t peer);

  LaunchInfo info;
  std::chrono::seconds timeout;
  /// Rank 0: the socket of each rank (index = rank; -1 for itself).
  /// Others: one socket, to rank 0.
  std::vector<int> peers;
};

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_BOOTSTRAP_H
