//===- Bootstrap.cpp - ranks started as processes, and their rendezvous ---===//

#include "tessel/runtime/Bootstrap.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FormatVariadic.h"

#include <arpa/inet.h>
#include <glob.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace tessel::rt;

std::optional<std::string> tessel::rt::processEnv(const char *name) {
  if (const char *v = std::getenv(name))
    return std::string(v);
  return std::nullopt;
}

namespace {

/// One launcher's variables, in the order they are read.
struct LauncherVars {
  const char *launcher;
  const char *rank, *size, *localRank, *localSize;
};

constexpr LauncherVars kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
     "SLURM_NTASKS_PER_NODE"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

llvm::Expected<int64_t> number(const EnvLookup &env, const char *name,
                               std::optional<int64_t> fallback) {
  std::optional<std::string> v = env(name);
  if (!v) {
    if (fallback)
      return *fallback;
    return llvm::createStringError(llvm::formatv(
        "the launcher set some of its variables but not {0}", name));
  }
  int64_t n;
  // Slurm writes "4(x2)" for uneven tasks per node: the first count.
  llvm::StringRef text = llvm::StringRef(*v).split('(').first.trim();
  if (text.getAsInteger(10, n) || n < 0)
    return llvm::createStringError(
        llvm::formatv("{0}={1} is not a number", name, *v));
  return n;
}

/// A port for a run on one machine, the same in every process of the job:
/// from the job's identity where the launcher gives one.
int derivedPort(const EnvLookup &env) {
  for (const char *name : {"TESSEL_PORT"})
    if (std::optional<std::string> v = env(name)) {
      int port;
      if (!llvm::StringRef(*v).getAsInteger(10, port))
        return port;
    }
  std::string job;
  for (const char *name :
       {"OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID", "SLURM_STEP_ID",
        "PMIX_NAMESPACE", "PMI_ID"})
    if (std::optional<std::string> v = env(name))
      job += *v + "/";
  if (job.empty())
    return 29500; // torchrun's default
  return 20000 + int(llvm::xxh3_64bits(job) % 20000);
}

} // namespace

llvm::Expected<std::optional<LaunchInfo>>
tessel::rt::detectLaunch(const EnvLookup &env) {
  for (const LauncherVars &v : kLaunchers) {
    if (!env(v.rank) && !env(v.size))
      continue;
    LaunchInfo info;
    info.launcher = v.launcher;
    auto rank = number(env, v.rank, std::nullopt);
    auto size = number(env, v.size, std::nullopt);
    if (!rank)
      return rank.takeError();
    if (!size)
      return size.takeError();
    auto localRank = number(env, v.localRank, *rank);
    auto localSize = number(env, v.localSize, *size);
    if (!localRank)
      return localRank.takeError();
    if (!localSize)
      return localSize.takeError();
    info.rank = *rank;
    info.size = *size;
    info.localRank = *localRank;
    info.localSize = *localSize;
    if (info.size < 1 || info.rank >= info.size ||
        info.localRank >= std::max<int64_t>(1, info.localSize))
      return llvm::createStringError(llvm::formatv(
          "{0} started this process as rank {1} of {2} (local rank {3} of "
          "{4}), which is not a place in the run",
          info.launcher, info.rank, info.size, info.localRank,
          info.localSize));
    std::optional<std::string> addr = env("MASTER_ADDR");
    std::optional<std::string> port = env("MASTER_PORT");
    if (addr && port) {
      info.host = *addr;
      if (llvm::StringRef(*port).getAsInteger(10, info.port) ||
          info.port <= 0 || info.port > 65535)
        return llvm::createStringError("MASTER_PORT=" + *port +
                                       " is not a TCP port");
    } else if (info.localSize >= info.size) {
      info.host = "127.0.0.1";
      info.port = derivedPort(env);
    } // else across machines with no address: TcpStore::connect says so

    return std::optional<LaunchInfo>(info);
  }
  return std::optional<LaunchInfo>();
}

namespace {
std::optional<LaunchInfo> &launchSlot() {
  static std::optional<LaunchInfo> slot;
  return slot;
}
} // namespace

const std::optional<LaunchInfo> &tessel::rt::currentLaunch() {
  return launchSlot();
}

void tessel::rt::setCurrentLaunch(std::optional<LaunchInfo> info) {
  launchSlot() = std::move(info);
}

std::vector<std::string>
tessel::rt::sharedLibraryCandidates(const char *soname, const char *pipSubdir,
                                    const char *overrideVar,
                                    const EnvLookup &env) {
  std::vector<std::string> out;
  if (std::optional<std::string> file = env(overrideVar))
    out.push_back(*file);
  out.push_back(soname);
  std::vector<std::string> prefixes;
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (std::optional<std::string> p = env(var))
      prefixes.push_back(*p + "/lib");
  if (std::optional<std::string> home = env("HOME"))
    prefixes.push_back(*home + "/.local/lib");
  prefixes.push_back("/usr/local/lib");
  prefixes.push_back("/usr/lib");
  for (const std::string &prefix : prefixes) {
    glob_t found{};
    std::string pattern = prefix + "/python3*/*-packages/" + pipSubdir + "/" +
                          soname;
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
      for (size_t i = 0; i < found.gl_pathc; ++i)
        out.push_back(found.gl_pathv[i]);
    globfree(&found);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// TcpStore
//===----------------------------------------------------------------------===//

namespace {

using Clock = std::chrono::steady_clock;

llvm::Error sysError(const std::string &what) {
  return llvm::createStringError(what + ": " + std::strerror(errno));
}

/// Waits until `fd` is readable (or writable) or the deadline passes.
bool ready(int fd, short events, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

llvm::Expected<int> listenOn(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return sysError("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(uint16_t(port));
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 128) != 0) {
    llvm::Error err = sysError(llvm::formatv(
        "rank 0 cannot listen on port {0} for the other ranks (set "
        "MASTER_PORT, or TESSEL_PORT, to a free port)",
        port));
    close(fd);
    return std::move(err);
  }
  return fd;
}

/// Connects to host:port, retrying until the deadline (rank 0 may not be
/// listening yet).
llvm::Expected<int> connectTo(const std::string &host, int port,
                              Clock::time_point deadline) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found))
    return llvm::createStringError("cannot resolve MASTER_ADDR '" + host +
                                   "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, void (*)(addrinfo *)> guard(found, freeaddrinfo);
  while (true) {
    for (addrinfo *a = found; a; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0)
        continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
        return fd;
      close(fd);
    }
    if (Clock::now() >= deadline)
      return llvm::createStringError(llvm::formatv(
          "rank 0 did not answer at {0}:{1}; is it running, and is "
          "MASTER_ADDR its address?",
          host, port));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool writeAll(int fd, const char *p, size_t n, Clock::time_point deadline) {
  while (n) {
    if (!ready(fd, POLLOUT, deadline))
      return false;
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

bool readAll(int fd, char *p, size_t n, Clock::time_point deadline) {
  while (n) {
    if (!ready(fd, POLLIN, deadline))
      return false;
    ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

} // namespace

llvm::Error TcpStore::sendTo(int fd, const std::string &data, int64_t peer) {
  auto deadline = Clock::now() + timeout;
  uint64_t n = data.size();
  if (!writeAll(fd, reinterpret_cast<const char *>(&n), sizeof(n), deadline) ||
      !writeAll(fd, data.data(), data.size(), deadline))
    return llvm::createStringError(llvm::formatv(
        "rank {0} cannot send to rank {1} (it stopped, or did not read for "
        "{2} s)",
        info.rank, peer, timeout.count()));
  return llvm::Error::success();
}

llvm::Error TcpStore::recvFrom(int fd, std::string &data, int64_t peer) {
  auto deadline = Clock::now() + timeout;
  uint64_t n = 0;
  bool ok = readAll(fd, reinterpret_cast<char *>(&n), sizeof(n), deadline);
  if (ok && n < (uint64_t(1) << 32)) {
    data.resize(n);
    ok = readAll(fd, data.data(), n, deadline);
  }
  if (!ok)
    return llvm::createStringError(llvm::formatv(
        "rank {0} heard nothing from rank {1} for {2} s (it stopped or "
        "hangs)",
        info.rank, peer, timeout.count()));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<TcpStore>>
TcpStore::connect(const LaunchInfo &info, std::chrono::seconds timeout) {
  if (info.host.empty() && info.size > 1)
    return llvm::createStringError(llvm::formatv(
        "{0} started this process as rank {1} of {2} across machines, but "
        "MASTER_ADDR and MASTER_PORT are not set; set them to the address "
        "of rank 0's machine and a free port (as torchrun does), e.g. "
        "mpirun -x MASTER_ADDR=node0 -x MASTER_PORT=29500",
        info.launcher, info.rank, info.size));
  std::unique_ptr<TcpStore> store(new TcpStore(info, timeout));
  auto deadline = Clock::now() + timeout;
  std::string hello = std::to_string(info.rank) + " " +
                      std::to_string(info.size);
  if (info.rank != 0) {
    llvm::Expected<int> fd = connectTo(info.host, info.port, deadline);
    if (!fd)
      return fd.takeError();
    store->peers = {*fd};
    if (llvm::Error err = store->sendTo(*fd, hello, 0))
      return std::move(err);
    std::string verdict;
    if (llvm::Error err = store->recvFrom(*fd, verdict, 0))
      return std::move(err);
    if (!verdict.empty())
      return llvm::createStringError(verdict);
    return std::move(store);
  }
  store->peers.assign(size_t(info.size), -1);
  if (info.size == 1)
    return std::move(store);
  llvm::Expected<int> listener = listenOn(info.port);
  if (!listener)
    return listener.takeError();
  int64_t joined = 1;
  std::string problem;
  while (joined < info.size) {
    if (!ready(*listener, POLLIN, deadline)) {
      close(*listener);
      return llvm::createStringError(llvm::formatv(
          "only {0} of {1} ranks reached rank 0 on port {2} within {3} s",
          joined, info.size, info.port, timeout.count()));
    }
    int fd = accept(*listener, nullptr, nullptr);
    if (fd < 0)
      continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string text;
    if (llvm::Error err = store->recvFrom(fd, text, -1)) {
      llvm::consumeError(std::move(err));
      close(fd);
      continue;
    }
    auto [r, s] = llvm::StringRef(text).split(' ');
    int64_t rank, size;
    if (r.getAsInteger(10, rank) || s.getAsInteger(10, size) || rank <= 0 ||
        rank >= info.size || store->peers[size_t(rank)] >= 0 ||
        size != info.size) {
      std::string why = llvm::formatv(
          "rank 0 of {0} refused a process that says it is rank {1} of {2} "
          "(another run on the same port?)",
          info.size, r, s);
      if (problem.empty())
        problem = why;
      llvm::consumeError(store->sendTo(fd, why, -1));
      close(fd);
      continue;
    }
    store->peers[size_t(rank)] = fd;
    ++joined;
  }
  close(*listener);
  for (int64_t r = 1; r < info.size; ++r)
    if (llvm::Error err = store->sendTo(store->peers[size_t(r)], "", r))
      return std::move(err);
  return std::move(store);
}

TcpStore::~TcpStore() {
  for (int fd : peers)
    if (fd >= 0)
      close(fd);
}

llvm::Error TcpStore::broadcast(std::string &data) {
  if (info.rank != 0)
    return recvFrom(peers[0], data, 0);
  for (int64_t r = 1; r < info.size; ++r)
    if (llvm::Error err = sendTo(peers[size_t(r)], data, r))
      return err;
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>>
TcpStore::gather(const std::string &data) {
  if (info.rank != 0) {
    if (llvm::Error err = sendTo(peers[0], data, 0))
      return std::move(err);
    return std::vector<std::string>();
  }
  std::vector<std::string> all(size_t(info.size));
  all[0] = data;
  for (int64_t r = 1; r < info.size; ++r)
    if (llvm::Error err = recvFrom(peers[size_t(r)], all[size_t(r)], r))
      return std::move(err);
  return all;
}

llvm::Expected<std::vector<std::string>>
TcpStore::allGather(const std::string &data) {
  llvm::Expected<std::vector<std::string>> all = gather(data);
  if (!all)
    return all.takeError();
  // Rank 0 sends the lengths and the bytes as one message.
  std::string packed;
  if (info.rank == 0)
    for (const std::string &s : *all) {
      uint64_t n = s.size();
      packed.append(reinterpret_cast<const char *>(&n), sizeof(n));
      packed += s;
    }
  if (llvm::Error err = broadcast(packed))
    return std::move(err);
  std::vector<std::string> out;
  for (size_t at = 0; at + sizeof(uint64_t) <= packed.size();) {
    uint64_t n;
    std::memcpy(&n, packed.data() + at, sizeof(n));
    at += sizeof(n);
    out.push_back(packed.substr(at, n));
    at += n;
  }
  if (int64_t(out.size()) != info.size)
    return llvm::createStringError("rank 0 sent a malformed gather");
  return out;
}

llvm::Error TcpStore::barrier() {
  llvm::Expected<std::vector<std::string>> all = gather("");
  if (!all)
    return all.takeError();
  std::string none;
  return broadcast(none);
}
