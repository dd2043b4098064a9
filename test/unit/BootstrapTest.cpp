//===- BootstrapTest.cpp - launch detection and the TCP rendezvous --------===//
//
// The host side of one process per GPU (tessel/runtime/Bootstrap.h), which
// needs no GPU: what each launcher's environment says, the TCP store's
// collectives among threads standing in for processes, and its errors.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Bootstrap.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <map>
#include <unistd.h>
#include <thread>

using namespace tessel::rt;

namespace {

EnvLookup envOf(std::map<std::string, std::string> vars) {
  return [vars](const char *name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end())
      return std::nullopt;
    return it->second;
  };
}

LaunchInfo detect(std::map<std::string, std::string> vars) {
  llvm::Expected<std::optional<LaunchInfo>> info = detectLaunch(envOf(vars));
  EXPECT_TRUE(bool(info)) << llvm::toString(info.takeError());
  EXPECT_TRUE(info->has_value());
  return **info;
}

std::string detectError(std::map<std::string, std::string> vars) {
  llvm::Expected<std::optional<LaunchInfo>> info = detectLaunch(envOf(vars));
  if (info)
    return "no error";
  return llvm::toString(info.takeError());
}

/// Rank `rank` of `size` meeting at 127.0.0.1:`port`.
LaunchInfo localRank(int64_t rank, int64_t size, int port) {
  LaunchInfo info;
  info.rank = rank;
  info.size = size;
  info.localRank = rank;
  info.localSize = size;
  info.launcher = "test";
  info.host = "127.0.0.1";
  info.port = port;
  return info;
}

/// A port no other test of this run uses.
int freePort() {
  static int next = 31000 + int(::getpid() % 2000) * 4;
  return next++;
}

} // namespace

TEST(Bootstrap, NoLauncherMeansThreads) {
  llvm::Expected<std::optional<LaunchInfo>> info =
      detectLaunch(envOf({{"HOME", "/root"}}));
  ASSERT_TRUE(bool(info));
  EXPECT_FALSE(info->has_value());
}

TEST(Bootstrap, Torchrun) {
  LaunchInfo i = detect({{"RANK", "5"},
                         {"WORLD_SIZE", "16"},
                         {"LOCAL_RANK", "1"},
                         {"LOCAL_WORLD_SIZE", "8"},
                         {"MASTER_ADDR", "node0"},
                         {"MASTER_PORT", "29400"}});
  EXPECT_EQ(i.launcher, "torchrun");
  EXPECT_EQ(i.rank, 5);
  EXPECT_EQ(i.size, 16);
  EXPECT_EQ(i.localRank, 1);
  EXPECT_EQ(i.localSize, 8);
  EXPECT_EQ(i.host, "node0");
  EXPECT_EQ(i.port, 29400);
}

TEST(Bootstrap, MpirunAndSrunOnOneMachine) {
  LaunchInfo m = detect({{"OMPI_COMM_WORLD_RANK", "2"},
                         {"OMPI_COMM_WORLD_SIZE", "4"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                         {"OMPI_MCA_ess_base_jobid", "12345"}});
  EXPECT_EQ(m.launcher, "mpirun");
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.localRank, 2);
  // All ranks on one machine: they meet at 127.0.0.1 on a port every
  // process of the job derives alike.
  EXPECT_EQ(m.host, "127.0.0.1");
  EXPECT_GE(m.port, 20000);
  EXPECT_LT(m.port, 40000);
  LaunchInfo again = detect({{"OMPI_COMM_WORLD_RANK", "0"},
                             {"OMPI_COMM_WORLD_SIZE", "4"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                             {"OMPI_MCA_ess_base_jobid", "12345"}});
  EXPECT_EQ(again.port, m.port);
  LaunchInfo other = detect({{"OMPI_COMM_WORLD_RANK", "0"},
                             {"OMPI_COMM_WORLD_SIZE", "4"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                             {"OMPI_MCA_ess_base_jobid", "777"}});
  EXPECT_NE(other.port, m.port);

  LaunchInfo s = detect({{"SLURM_PROCID", "3"},
                         {"SLURM_NTASKS", "8"},
                         {"SLURM_LOCALID", "3"},
                         {"SLURM_NTASKS_PER_NODE", "8(x1)"},
                         {"TESSEL_PORT", "29999"}});
  EXPECT_EQ(s.launcher, "srun");
  EXPECT_EQ(s.localSize, 8);
  EXPECT_EQ(s.port, 29999);
}

TEST(Bootstrap, AcrossMachinesWithoutAnAddress) {
  LaunchInfo i = detect({{"SLURM_PROCID", "9"},
                         {"SLURM_NTASKS", "16"},
                         {"SLURM_LOCALID", "1"},
                         {"SLURM_NTASKS_PER_NODE", "8"}});
  EXPECT_EQ(i.host, "");
  llvm::Expected<std::unique_ptr<TcpStore>> store =
      TcpStore::connect(i, std::chrono::seconds(1));
  ASSERT_FALSE(bool(store));
  EXPECT_EQ(llvm::toString(store.takeError()),
            "srun started this process as rank 9 of 16 across machines, but "
            "MASTER_ADDR and MASTER_PORT are not set; set them to the address "
            "of rank 0's machine and a free port (as torchrun does), e.g. "
            "mpirun -x MASTER_ADDR=node0 -x MASTER_PORT=29500");
}

TEST(Bootstrap, MalformedEnvironments) {
  EXPECT_EQ(detectError({{"RANK", "1"}}),
            "the launcher set some of its variables but not WORLD_SIZE");
  EXPECT_EQ(detectError({{"RANK", "one"}, {"WORLD_SIZE", "2"}}),
            "RANK=one is not a number");
  EXPECT_EQ(detectError({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
            "torchrun started this process as rank 4 of 4 (local rank 4 of "
            "4), which is not a place in the run");
  EXPECT_EQ(detectError({{"RANK", "0"},
                         {"WORLD_SIZE", "2"},
                         {"MASTER_ADDR", "x"},
                         {"MASTER_PORT", "70000"}}),
            "MASTER_PORT=70000 is not a TCP port");
}

TEST(Bootstrap, StoreCollectivesAmongRanks) {
  constexpr int64_t n = 4;
  int port = freePort();
  std::vector<std::string> broadcastSeen(n), failures(n);
  std::vector<std::vector<std::string>> gathered(n), allGathered(n);
  std::vector<std::thread> ranks;
  for (int64_t r = 0; r < n; ++r)
    ranks.emplace_back([&, r] {
      auto store = TcpStore::connect(localRank(r, n, port),
                                     std::chrono::seconds(20));
      if (!store) {
        failures[r] = llvm::toString(store.takeError());
        return;
      }
      std::string data = r == 0 ? std::string("id\0bytes", 8) : "";
      if (llvm::Error err = (*store)->broadcast(data)) {
        failures[r] = llvm::toString(std::move(err));
        return;
      }
      broadcastSeen[r] = data;
      auto g = (*store)->gather("rank" + std::to_string(r));
      auto a = (*store)->allGather(std::string(size_t(r), 'x'));
      llvm::Error b = (*store)->barrier();
      if (!g || !a || b) {
        failures[r] = "collective failed";
        llvm::consumeError(g.takeError());
        llvm::consumeError(a.takeError());
        llvm::consumeError(std::move(b));
        return;
      }
      gathered[r] = *g;
      allGathered[r] = *a;
    });
  for (std::thread &t : ranks)
    t.join();
  for (int64_t r = 0; r < n; ++r) {
    EXPECT_EQ(failures[r], "") << "rank " << r;
    EXPECT_EQ(broadcastSeen[r], std::string("id\0bytes", 8));
    EXPECT_EQ(allGathered[r],
              (std::vector<std::string>{"", "x", "xx", "xxx"}));
  }
  EXPECT_EQ(gathered[0],
            (std::vector<std::string>{"rank0", "rank1", "rank2", "rank3"}));
  EXPECT_TRUE(gathered[1].empty());
}

TEST(Bootstrap, NobodyAtRankZero) {
  LaunchInfo info = localRank(1, 2, freePort());
  auto store = TcpStore::connect(info, std::chrono::seconds(1));
  ASSERT_FALSE(bool(store));
  EXPECT_EQ(llvm::toString(store.takeError()),
            "rank 0 did not answer at 127.0.0.1:" + std::to_string(info.port) +
                "; is it running, and is MASTER_ADDR its address?");
}

TEST(Bootstrap, RankZeroWaitsForTheOthers) {
  LaunchInfo info = localRank(0, 3, freePort());
  auto store = TcpStore::connect(info, std::chrono::seconds(1));
  ASSERT_FALSE(bool(store));
  EXPECT_EQ(llvm::toString(store.takeError()),
            "only 1 of 3 ranks reached rank 0 on port " +
                std::to_string(info.port) + " within 1 s");
}

TEST(Bootstrap, AnotherRunOnThePortIsRefused) {
  int port = freePort();
  std::string joinerError;
  std::thread joiner([&] {
    // Rank 0 runs a world of 2.
    auto store =
        TcpStore::connect(localRank(1, 4, port), std::chrono::seconds(5));
    joinerError = store ? "joined" : llvm::toString(store.takeError());
  });
  auto store = TcpStore::connect(localRank(0, 2, port), std::chrono::seconds(2));
  joiner.join();
  ASSERT_FALSE(bool(store));
  llvm::consumeError(store.takeError());
  EXPECT_EQ(joinerError, "rank 0 of 2 refused a process that says it is rank "
                         "1 of 4 (another run on the same port?)");
}

TEST(Bootstrap, LibraryCandidates) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-pip", dir));
  llvm::SmallString<128> lib(dir);
  llvm::sys::path::append(lib, "lib", "python3.11", "site-packages");
  llvm::sys::path::append(lib, "nvidia", "nccl", "lib");
  ASSERT_FALSE(llvm::sys::fs::create_directories(lib));
  llvm::sys::path::append(lib, "libnccl.so.2");
  {
    std::error_code ec;
    llvm::raw_fd_ostream(lib, ec) << "";
    ASSERT_FALSE(ec);
  }
  std::vector<std::string> c = sharedLibraryCandidates(
      "libnccl.so.2", "nvidia/nccl/lib", "TESSEL_NCCL_LIBRARY",
      envOf({{"TESSEL_NCCL_LIBRARY", "/opt/nccl/libnccl.so.2"},
             {"VIRTUAL_ENV", std::string(dir)}}));
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], "/opt/nccl/libnccl.so.2");
  EXPECT_EQ(c[1], "libnccl.so.2");
  EXPECT_EQ(c[2], std::string(lib));
  llvm::sys::fs::remove_directories(dir);
}
