//===- ThreadCommunicator.cpp - ranks as threads of one process -----------===//
//
// Collectives: the members of a group meet at a slot keyed by (the group, the
// collective's number in that group). Starting one deposits this member's
// input and output pointers; the operation then runs in phases, each member
// doing its own share of a phase directly on the others' buffers (no
// copies), all members finishing phase p before any starts p + 1. A member's
// operation completes once every member has finished the last phase, so no
// buffer is released while another member reads it. Reductions run in group
// order, so every member computes identical bits.
//
// Progress is made by whichever member waits: `wait` advances every
// operation this rank has in flight, not only the one it waits for, so
// members may wait for their operations in different orders.
//
// Point-to-point: a send copies its bytes into the receiver's mailbox
// (keyed by group, sender, receiver and tag) and completes at once; a receive
// completes when its message is there.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Communicator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <tuple>

using namespace tessel;
using namespace tessel::rt;

namespace {

/// A group of the thread backend: `key` names it to every member.
class ThreadGroup final : public Group {
public:
  ThreadGroup(std::vector<int64_t> ranks, int64_t index,
              std::pair<int64_t, int64_t> key)
      : Group(std::move(ranks), index), key(key) {}
  std::pair<int64_t, int64_t> key; ///< (split number, colour)
};

/// The pointers every member deposited for one collective.
struct Slot {
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  int64_t deposited = 0, released = 0;
  std::vector<int64_t> done; ///< members past each phase
};

using SlotKey = std::tuple<int64_t, int64_t, int64_t>; ///< group key, number
/// (group split number, colour, from, to, tag): messages match within
/// their group, as MPI's within their communicator.
using MailKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

/// One member's share of a phase, given every member's buffers.
using Phase = std::function<void(const std::vector<const void *> &ins,
                                 const std::vector<void *> &outs)>;

struct World {
  World(int64_t size, std::chrono::seconds timeout)
      : size(size), timeout(timeout), wakeups(size) {}
  int64_t size;
  std::chrono::seconds timeout;
  std::mutex mutex;
  /// Each rank sleeps on its own: an event wakes only the ranks it may let
  /// progress (the members of the group, a message's receiver). Waking all
  /// of them for every event costs the ranks that compute their cores
  /// where ranks outnumber cores.
  std::vector<std::condition_variable> wakeups;
  std::map<SlotKey, Slot> slots;
  std::map<MailKey, std::deque<std::vector<char>>> mailboxes;
};

/// An operation this rank has in flight.
struct ThreadOperation final : PendingOperation {
  // A collective: the slot and the phases still to run.
  Slot *slot = nullptr;
  SlotKey key;
  int64_t members = 0;
  std::vector<int64_t> ranks; ///< the group's, to wake
  std::vector<Phase> phases;
  size_t next = 0;
  // A receive.
  bool isRecv = false;
  MailKey mail;
  void *out = nullptr;
  int64_t bytes = 0;
  bool finished = false;
};

class ThreadCommunicator final : public Communicator {
public:
  ThreadCommunicator(World &world, int64_t rank)
      : shared(world), me(rank), everyone(iota(world.size), rank, {-1, 0}),
        limit(world.timeout) {}
  int64_t rank() const override { return me; }
  int64_t size() const override { return shared.size; }
  std::string backend() const override { return "threads"; }
  const Group &world() const override { return everyone; }

  std::unique_ptr<Group> split(int64_t color, int64_t key) override {
    int64_t mine[2] = {color, key};
    std::vector<int64_t> all(2 * shared.size);
    allGather(mine, all.data(), sizeof(mine), everyone);
    int64_t number = splits++;
    if (color < 0)
      return nullptr;
    std::vector<std::pair<int64_t, int64_t>> members; // (key, rank)
    for (int64_t r = 0; r < shared.size; ++r)
      if (all[2 * r] == color)
        members.push_back({all[2 * r + 1], r});
    std::sort(members.begin(), members.end());
    std::vector<int64_t> ranks;
    int64_t index = 0;
    for (auto &[k, r] : members) {
      if (r == me)
        index = int64_t(ranks.size());
      ranks.push_back(r);
    }
    return std::make_unique<ThreadGroup>(std::move(ranks), index,
                                         std::make_pair(number, color));
  }

  Request startAllReduce(const void *in, void *out, int64_t count, DType type,
                         ReduceOp op, const Group &g) override {
    // Reduce-scatter then all-gather in shared memory: member j reduces
    // chunk j (in group order) into its own output, then copies the other
    // chunks from the others' outputs.
    int64_t width = byteSize(type), n = g.size(), index = g.index();
    auto chunk = [count, n](int64_t j) {
      int64_t per = (count + n - 1) / n;
      int64_t lo = std::min(count, j * per);
      return std::make_pair(lo, std::min(count, lo + per));
    };
    Phase reduce = [=](const std::vector<const void *> &ins,
                       const std::vector<void *> &) {
      auto [lo, hi] = chunk(index);
      char *dst = static_cast<char *>(out) + lo * width;
      std::memcpy(dst, static_cast<const char *>(ins[0]) + lo * width,
                  (hi - lo) * width);
      for (size_t j = 1; j < ins.size(); ++j)
        reduceInto(dst, static_cast<const char *>(ins[j]) + lo * width,
                   hi - lo, type, op);
    };
    Phase gather = [=](const std::vector<const void *> &,
                       const std::vector<void *> &outs) {
      for (int64_t j = 0; j < n; ++j) {
        if (j == index)
          continue;
        auto [lo, hi] = chunk(j);
        std::memcpy(static_cast<char *>(out) + lo * width,
                    static_cast<const char *>(outs[j]) + lo * width,
                    (hi - lo) * width);
      }
    };
    return start(in, out, g, {reduce, gather});
  }

  Request startReduceScatter(const void *in, void *out, int64_t count,
                             DType type, ReduceOp op, const Group &g) override {
    int64_t width = byteSize(type), index = g.index();
    return start(in, out, g,
                 {[=](const std::vector<const void *> &ins,
                      const std::vector<void *> &) {
                   int64_t at = index * count * width;
                   std::memcpy(out, static_cast<const char *>(ins[0]) + at,
                               count * width);
                   for (size_t j = 1; j < ins.size(); ++j)
                     reduceInto(out, static_cast<const char *>(ins[j]) + at,
                                count, type, op);
                 }});
  }

  Request startAllGather(const void *in, void *out, int64_t bytes,
                         const Group &g) override {
    return start(in, out, g,
                 {[=](const std::vector<const void *> &ins,
                      const std::vector<void *> &) {
                   for (size_t j = 0; j < ins.size(); ++j)
                     std::memcpy(static_cast<char *>(out) + j * bytes, ins[j],
                                 bytes);
                 }});
  }

  Request startAllToAll(const void *in, void *out, int64_t bytes,
                        const Group &g) override {
    int64_t index = g.index();
    return start(in, out, g,
                 {[=](const std::vector<const void *> &ins,
                      const std::vector<void *> &) {
                   for (size_t j = 0; j < ins.size(); ++j)
                     std::memcpy(static_cast<char *>(out) + j * bytes,
                                 static_cast<const char *>(ins[j]) +
                                     index * bytes,
                                 bytes);
                 }});
  }

  Request startPermute(const void *in, void *out, int64_t bytes,
                       const std::vector<int64_t> &pairs,
                       const Group &g) override {
    int64_t index = g.index();
    return start(in, out, g,
                 {[=](const std::vector<const void *> &ins,
                      const std::vector<void *> &) {
                   std::memset(out, 0, bytes);
                   for (size_t k = 0; k + 1 < pairs.size(); k += 2)
                     if (pairs[k + 1] == index)
                       std::memcpy(out, ins[pairs[k]], bytes);
                 }});
  }

  Request startSend(const void *in, int64_t bytes, int64_t peer, int64_t tag,
                    const Group &g) override {
    const char *p = static_cast<const char *>(in);
    std::lock_guard<std::mutex> lock(shared.mutex);
    auto key = groupKey(g);
    shared.mailboxes[{key.first, key.second, me, peerRank(g, peer), tag}]
        .emplace_back(p, p + bytes);
    shared.wakeups[peerRank(g, peer)].notify_one();
    return Request();
  }

  Request startRecv(void *out, int64_t bytes, int64_t peer, int64_t tag,
                    const Group &g) override {
    auto op = std::make_shared<ThreadOperation>();
    op->isRecv = true;
    auto key = groupKey(g);
    op->mail = {key.first, key.second, peerRank(g, peer), me, tag};
    op->out = out;
    op->bytes = bytes;
    std::lock_guard<std::mutex> lock(shared.mutex);
    inFlight.push_back(op);
    return Request(op);
  }

  void wait(Request &request) override {
    auto *op = static_cast<ThreadOperation *>(request.pending());
    if (!op)
      return;
    std::unique_lock<std::mutex> lock(shared.mutex);
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      progress(lock);
      if (op->finished)
        break;
      if (shared.wakeups[me].wait_until(lock, deadline) ==
          std::cv_status::timeout) {
        progress(lock);
        if (op->finished)
          break;
        lock.unlock();
        fail(std::string(op->isRecv ? "a receive" : "a collective") +
             " waited more than " + std::to_string(limit.count()) +
             " s for " +
             (op->isRecv ? "its sender" : "the other members of its group") +
             "; another rank failed or is stuck");
      }
    }
    request.reset();
  }

  void gatherToRoot(const void *in, void *out, int64_t bytes) override {
    std::vector<char> all(shared.size * bytes);
    allGather(in, all.data(), bytes, everyone);
    if (me == 0)
      std::memcpy(out, all.data(), all.size());
  }

  void barrier() override {
    char nothing = 0;
    std::vector<char> sink(shared.size);
    allGather(&nothing, sink.data(), 1, everyone);
  }

  std::chrono::seconds setWaitLimit(std::chrono::seconds l) override {
    return std::exchange(limit, l);
  }

  [[noreturn]] void fail(const std::string &message) override {
    // One write, so lines of other ranks cannot cut into it.
    llvm::errs() << ("error: rank " + std::to_string(me) + ": " + message +
                     "\n");
    llvm::errs().flush();
    // Every rank is a thread of this process: end them all, non-zero.
    std::_Exit(1);
  }

private:
  static std::vector<int64_t> iota(int64_t n) {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i)
      v[i] = i;
    return v;
  }

  std::pair<int64_t, int64_t> groupKey(const Group &g) {
    auto *group = dynamic_cast<const ThreadGroup *>(&g);
    if (!group)
      fail("internal error: a group of another backend");
    return group->key;
  }

  int64_t peerRank(const Group &g, int64_t peer) {
    if (peer < 0 || peer >= g.size())
      fail("point-to-point peer " + std::to_string(peer) +
           " is outside its group of " + std::to_string(g.size()));
    return g.ranks()[peer];
  }

  /// Wakes the other members of a group (called with the lock held).
  void wake(const std::vector<int64_t> &ranks) {
    for (int64_t r : ranks)
      if (r != me)
        shared.wakeups[r].notify_one();
  }

  /// Deposits this member's buffers for the group's next collective and
  /// returns the operation in flight.
  Request start(const void *in, void *out, const Group &g,
                std::vector<Phase> phases) {
    auto *group = dynamic_cast<const ThreadGroup *>(&g);
    if (!group || g.index() < 0)
      fail("internal error: a collective on a group this rank is not in");
    auto op = std::make_shared<ThreadOperation>();
    int64_t n = g.size();
    op->key = {group->key.first, group->key.second, sequence[group->key]++};
    op->members = n;
    op->ranks = g.ranks();
    op->phases = std::move(phases);
    std::lock_guard<std::mutex> lock(shared.mutex);
    Slot &slot = shared.slots[op->key];
    if (slot.inputs.empty()) {
      slot.inputs.resize(n);
      slot.outputs.resize(n);
      slot.done.assign(op->phases.size(), 0);
    }
    slot.inputs[g.index()] = in;
    slot.outputs[g.index()] = out;
    ++slot.deposited;
    op->slot = &slot;
    inFlight.push_back(op);
    wake(op->ranks);
    return Request(op);
  }

  /// Advances every operation of this rank as far as the others allow.
  /// Called with the lock held; phases run without it.
  void progress(std::unique_lock<std::mutex> &lock) {
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t k = 0; k < inFlight.size(); ++k) {
        ThreadOperation &op = *inFlight[k];
        if (op.isRecv ? advanceRecv(op) : advanceCollective(op, lock))
          moved = true;
      }
      llvm::erase_if(inFlight, [](const std::shared_ptr<ThreadOperation> &op) {
        return op->finished;
      });
    }
  }

  bool advanceRecv(ThreadOperation &op) {
    auto it = shared.mailboxes.find(op.mail);
    if (it == shared.mailboxes.end() || it->second.empty())
      return false;
    std::vector<char> &message = it->second.front();
    if (int64_t(message.size()) != op.bytes)
      fail("a receive of " + std::to_string(op.bytes) + " bytes from rank " +
           std::to_string(std::get<2>(op.mail)) + " got a message of " +
           std::to_string(message.size()) + " bytes");
    std::memcpy(op.out, message.data(), op.bytes);
    it->second.pop_front();
    if (it->second.empty())
      shared.mailboxes.erase(it);
    op.finished = true;
    return true;
  }

  bool advanceCollective(ThreadOperation &op,
                         std::unique_lock<std::mutex> &lock) {
    Slot &slot = *op.slot;
    bool moved = false;
    while (op.next < op.phases.size()) {
      bool ready = op.next == 0 ? slot.deposited == op.members
                                : slot.done[op.next - 1] == op.members;
      if (!ready)
        return moved;
      std::vector<const void *> ins = slot.inputs;
      std::vector<void *> outs = slot.outputs;
      lock.unlock();
      op.phases[op.next](ins, outs);
      lock.lock();
      ++slot.done[op.next++];
      wake(op.ranks);
      moved = true;
    }
    if (slot.done.back() != op.members)
      return moved;
    op.finished = true;
    // The last member to finish erases the slot.
    if (++slot.released == op.members)
      shared.slots.erase(op.key);
    return true;
  }

  World &shared;
  int64_t me;
  ThreadGroup everyone;
  std::chrono::seconds limit; ///< of this rank's waits (setWaitLimit)
  int64_t splits = 0;
  std::map<std::pair<int64_t, int64_t>, int64_t> sequence;
  std::vector<std::shared_ptr<ThreadOperation>> inFlight;
};

} // namespace

int rt::runThreadRanks(int64_t ranks, std::chrono::seconds timeout,
                       const std::function<int(Communicator &)> &body) {
  World world(ranks, timeout);
  std::vector<int> results(ranks, 0);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(world, r);
      results[r] = body(comm);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r : results)
    if (r)
      return r;
  return 0;
}
