//===- CommunicatorTest.cpp - the interpreter's in-process collectives ----===//

#include "tessel/interpreter/Communicator.h"

#include "gtest/gtest.h"

#include <thread>

using namespace tessel;
using namespace tessel::interp;

namespace {

HostTensor scalar(double v) {
  HostTensor t(DType::F32, {1});
  t.f[0] = v;
  return t;
}

TEST(Communicator, ExchangeOrdersByGroupIndex) {
  Communicator comm(4);
  std::vector<std::vector<double>> seen(4);
  std::vector<std::thread> threads;
  // Two groups of two: {0, 2} and {1, 3}; device 2 is index 0 of its group.
  for (int64_t d = 0; d < 4; ++d)
    threads.emplace_back([&, d] {
      std::vector<int64_t> members = d % 2 ? std::vector<int64_t>{3, 1}
                                           : std::vector<int64_t>{2, 0};
      int64_t index = (d == 2 || d == 3) ? 0 : 1;
      for (int round = 0; round < 3; ++round) {
        auto all = comm.exchange(d, members, index, scalar(10 * d + round));
        ASSERT_TRUE(static_cast<bool>(all));
        for (auto &t : *all)
          seen[d].push_back(t->f[0]);
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(seen[0], (std::vector<double>{20, 0, 21, 1, 22, 2}));
  EXPECT_EQ(seen[3], (std::vector<double>{30, 10, 31, 11, 32, 12}));
}

TEST(Communicator, SendRecvMatchesByChannelAndPeer) {
  Communicator comm(2);
  std::thread sender([&] {
    comm.send(/*channel=*/1, 0, 1, scalar(5));
    comm.send(/*channel=*/0, 0, 1, scalar(7));
  });
  auto a = comm.recv(0, 0, 1);
  auto b = comm.recv(1, 0, 1);
  sender.join();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->f[0], 7);
  EXPECT_EQ(b->f[0], 5);
}

TEST(Communicator, MissingPeerTimesOutInsteadOfHanging) {
  Communicator comm(2, std::chrono::seconds(1));
  auto all = comm.exchange(0, {0, 1}, 0, scalar(1));
  ASSERT_FALSE(static_cast<bool>(all));
  EXPECT_NE(llvm::toString(all.takeError()).find("timed out"),
            std::string::npos);
  auto r = comm.recv(3, 1, 0);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("no matching send"),
            std::string::npos);
}

TEST(Communicator, AbortWakesWaiters) {
  Communicator comm(2);
  std::thread waiter([&] {
    auto all = comm.exchange(0, {0, 1}, 0, scalar(1));
    ASSERT_FALSE(static_cast<bool>(all));
    EXPECT_NE(llvm::toString(all.takeError()).find("another rank failed"),
              std::string::npos);
  });
  comm.abort();
  waiter.join();
}

} // namespace
