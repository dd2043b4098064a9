//===- CommScenarios.h - checks every Communicator backend must pass -*- C++ -*-//
//
// Shared by the unit tests (ranks as threads) and tessel-comm-check (the
// same checks under mpirun, for the MPI backend). Each scenario runs on
// every rank of a run of 4 and reports failures through `expect`.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TEST_UNIT_COMMSCENARIOS_H
#define TESSEL_TEST_UNIT_COMMSCENARIOS_H

#include "tessel/runtime/Communicator.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessel::rt::scenarios {

using Expect = std::function<void(bool, const std::string &)>;
using Scenario = void (*)(Communicator &, const Expect &);

/// 4 ranks as a 2 x 2 mesh: pairs {0,1},{2,3} and the world.
inline void collectivesOverGroups(Communicator &c, const Expect &expect) {
  int64_t r = c.rank();
  std::unique_ptr<Group> pair = splitByPartition(c, {{0, 1}, {2, 3}});
  const Group &all = c.world();
  expect(pair && pair->size() == 2 && pair->index() == r % 2 &&
             pair->ranks()[0] == r / 2 * 2,
         "split into pairs");
  float in[3] = {float(r), float(10 * r), 1.0f}, out[12];
  c.allReduce(in, out, 3, DType::F32, ReduceOp::Sum, *pair);
  float base = float(r / 2 * 4 + 1);
  expect(out[0] == base && out[1] == 10 * base && out[2] == 2,
         "all-reduce sum over the pair");
  c.allReduce(in, out, 3, DType::F32, ReduceOp::Max, all);
  expect(out[0] == 3 && out[1] == 30, "all-reduce max over all");
  c.allGather(in, out, sizeof(float), all);
  expect(out[0] == 0 && out[1] == 1 && out[2] == 2 && out[3] == 3,
         "all-gather in rank order");
  float two[2] = {float(r), float(r + 100)}, mine = -1;
  c.reduceScatter(two, &mine, 1, DType::F32, ReduceOp::Sum, *pair);
  float pairSum = float(2 * (r / 2 * 2) + 1);
  expect(mine == (r % 2 ? pairSum + 200 : pairSum), "reduce-scatter");
  // All-to-all: block j of rank r is r*10+j; rank r receives j*10+r.
  float blocks[4], got[4];
  for (int j = 0; j < 4; ++j)
    blocks[j] = float(r * 10 + j);
  c.allToAll(blocks, got, sizeof(float), all);
  for (int j = 0; j < 4; ++j)
    expect(got[j] == float(j * 10 + r), "all-to-all block");
  // Permute: a ring 0->1->2->3->0, except that nobody sends to 0.
  float shifted = -1;
  c.permute(in, &shifted, sizeof(float), {0, 1, 1, 2, 2, 3}, all);
  expect(shifted == (r == 0 ? 0.0f : float(r - 1)), "permute");
  int64_t id = 100 + r, gathered[4] = {0, 0, 0, 0};
  c.gatherToRoot(&id, gathered, sizeof(int64_t));
  if (r == 0)
    expect(gathered[3] == 103 && gathered[1] == 101, "gather to root");
  c.barrier();
}

/// Ranks passing the same colour form a group ordered by key; a negative
/// colour gets none.
inline void splitByColourAndKey(Communicator &c, const Expect &expect) {
  int64_t r = c.rank();
  std::unique_ptr<Group> g = c.split(r % 2 ? -1 : 7, -r);
  if (r % 2) {
    expect(!g, "a negative colour gets no group");
    return;
  }
  expect(g && g->ranks() == std::vector<int64_t>{2, 0} &&
             g->index() == (r == 2 ? 0 : 1),
         "members ordered by key");
  int64_t in = r + 1, out = 0;
  c.allReduce(&in, &out, 1, DType::I64, ReduceOp::Sum, *g);
  expect(out == 4, "all-reduce over the even ranks");
}

/// Started collectives complete whatever order each rank waits in.
inline void waitInAnyOrder(Communicator &c, const Expect &expect) {
  int64_t r = c.rank();
  double a = double(r), b = double(10 * r), sumA = 0, maxB = 0;
  std::vector<double> gathered(c.size());
  Request first =
      c.startAllReduce(&a, &sumA, 1, DType::F64, ReduceOp::Sum, c.world());
  Request second =
      c.startAllReduce(&b, &maxB, 1, DType::F64, ReduceOp::Max, c.world());
  Request third =
      c.startAllGather(&a, gathered.data(), sizeof(double), c.world());
  std::vector<Request *> order = {&first, &second, &third};
  std::rotate(order.begin(), order.begin() + r % 3, order.end());
  for (Request *q : order)
    c.wait(*q);
  expect(first.complete() && second.complete() && third.complete(),
         "waited requests are complete");
  double n = double(c.size());
  expect(sumA == n * (n - 1) / 2 && maxB == 10 * (n - 1), "reductions");
  for (int64_t k = 0; k < c.size(); ++k)
    expect(gathered[k] == double(k), "gather");
}

/// Pairs (0,1), (2,3) exchange messages both ways, each sending first;
/// messages of one tag arrive in order, tags are separate, and a receive
/// may start before its message is sent.
inline void sendAndReceiveBothWays(Communicator &c, const Expect &expect) {
  int64_t r = c.rank();
  std::unique_ptr<Group> pair = splitByPartition(c, {{0, 1}, {2, 3}});
  int64_t peer = 1 - pair->index();
  int32_t m0 = int32_t(100 * r), m1 = m0 + 1, m5[2] = {m0 + 5, m0 + 6};
  int32_t got5[2] = {0, 0}, got0 = -1, got1 = -1;
  Request early;
  if (pair->index() == 1)
    early = c.startRecv(got5, sizeof(got5), peer, 5, *pair);
  std::vector<Request> sends;
  sends.push_back(c.startSend(&m0, sizeof(m0), peer, 0, *pair));
  sends.push_back(c.startSend(&m1, sizeof(m1), peer, 0, *pair));
  sends.push_back(c.startSend(m5, sizeof(m5), peer, 5, *pair));
  if (pair->index() == 1)
    c.wait(early);
  else
    c.recv(got5, sizeof(got5), peer, 5, *pair);
  c.recv(&got0, sizeof(got0), peer, 0, *pair);
  c.recv(&got1, sizeof(got1), peer, 0, *pair);
  c.waitAll(sends);
  int32_t base = int32_t(100 * pair->ranks()[peer]);
  expect(got0 == base && got1 == base + 1, "tag 0 in order");
  expect(got5[0] == base + 5 && got5[1] == base + 6, "tag 5");
}

/// Messages match within their group: the same tag between the same two
/// ranks on two groups does not mix.
inline void tagsArePerGroup(Communicator &c, const Expect &expect) {
  int64_t r = c.rank();
  std::unique_ptr<Group> pair = splitByPartition(c, {{0, 1}, {2, 3}});
  int64_t peer = 1 - pair->index();
  int32_t onPair = int32_t(10 + r), onWorld = int32_t(20 + r);
  int32_t gotPair = -1, gotWorld = -1;
  // Sent on the pair first, received on the world first.
  std::vector<Request> sends;
  sends.push_back(c.startSend(&onPair, sizeof(onPair), peer, 3, *pair));
  sends.push_back(c.startSend(&onWorld, sizeof(onWorld),
                              pair->ranks()[peer], 3, c.world()));
  c.recv(&gotWorld, sizeof(gotWorld), pair->ranks()[peer], 3, c.world());
  c.recv(&gotPair, sizeof(gotPair), peer, 3, *pair);
  c.waitAll(sends);
  int64_t other = pair->ranks()[peer];
  expect(gotPair == 10 + other && gotWorld == 20 + other,
         "a tag on the world and on a pair");
}

/// 16-bit floats reduce through f32 and round once.
inline void sixteenBitReductions(Communicator &c, const Expect &expect) {
  uint16_t in[2], out[2];
  storeElement(DType::BF16, 1.0, 0, reinterpret_cast<uint8_t *>(&in[0]));
  storeElement(DType::BF16, 0.5 * double(c.rank()), 0,
               reinterpret_cast<uint8_t *>(&in[1]));
  c.allReduce(in, out, 2, DType::BF16, ReduceOp::Sum, c.world());
  double f0, f1;
  int64_t i;
  loadElement(DType::BF16, reinterpret_cast<uint8_t *>(&out[0]), f0, i);
  loadElement(DType::BF16, reinterpret_cast<uint8_t *>(&out[1]), f1, i);
  double n = double(c.size());
  expect(f0 == n && f1 == 0.5 * n * (n - 1) / 2, "bf16 all-reduce");
}

inline const std::vector<std::pair<const char *, Scenario>> &all() {
  static const std::vector<std::pair<const char *, Scenario>> list = {
      {"collectives over groups", collectivesOverGroups},
      {"split by colour and key", splitByColourAndKey},
      {"wait in any order", waitInAnyOrder},
      {"send and receive both ways", sendAndReceiveBothWays},
      {"tags are per group", tagsArePerGroup},
      {"16-bit reductions", sixteenBitReductions},
  };
  return list;
}

} // namespace tessel::rt::scenarios

#endif // TESSEL_TEST_UNIT_COMMSCENARIOS_H
