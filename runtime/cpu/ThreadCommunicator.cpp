//===- ThreadCommunicator.cpp - ranks as threads of one process -----------===//
//
// Members of a group meet at a slot keyed by (their collective sequence
// number, the group's first rank): each deposits a pointer to its input and
// waits for the others; then each reads the others' inputs directly (no
// copies) into its own output, and waits until all have finished reading
// before returning, so no input is freed while another rank reads it.
// Reductions run in group order, so every member computes identical bits.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Communicator.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

using namespace tessel;
using namespace tessel::rt;

rt::Communicator::~Communicator() = default;

namespace {

struct Slot {
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  int64_t deposited = 0;
  std::vector<int64_t> done; // members past each phase
};

using Phase = std::function<void(const std::vector<const void *> &,
                                 const std::vector<void *> &)>;

struct World {
  explicit World(int64_t size, std::chrono::seconds timeout)
      : sequence(size, 0), timeout(timeout) {}
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> sequence;
  std::map<std::pair<int64_t, int64_t>, Slot> slots;
  std::chrono::seconds timeout;
  bool failed = false;
};

class ThreadCommunicator final : public Communicator {
public:
  ThreadCommunicator(World &world, int64_t rank) : world(world), me(rank) {}
  int64_t rank() const override { return me; }
  int64_t size() const override { return world.sequence.size(); }
  std::string backend() const override { return "threads"; }

  void allReduce(const void *in, void *out, int64_t count, DType type,
                 ReduceOp op, const std::vector<int64_t> &group) override {
    // Reduce-scatter then all-gather in shared memory: member j reduces
    // chunk j (in group order, so every member gets the same bits) into its
    // own output, then copies the other chunks from the others' outputs.
    int64_t width = byteSize(type), n = group.size(), index = indexIn(group);
    auto chunk = [&](int64_t j) {
      int64_t per = (count + n - 1) / n;
      int64_t lo = std::min(count, j * per);
      return std::make_pair(lo, std::min(count, lo + per));
    };
    meetPhases(
        in, out, group,
        {[&](const std::vector<const void *> &ins,
             const std::vector<void *> &) {
           auto [lo, hi] = chunk(index);
           char *dst = static_cast<char *>(out) + lo * width;
           std::memcpy(dst, static_cast<const char *>(ins[0]) + lo * width,
                       (hi - lo) * width);
           for (size_t j = 1; j < ins.size(); ++j)
             reduceInto(dst, static_cast<const char *>(ins[j]) + lo * width,
                        hi - lo, type, op);
         },
         [&](const std::vector<const void *> &,
             const std::vector<void *> &outs) {
           for (int64_t j = 0; j < n; ++j) {
             if (j == index)
               continue;
             auto [lo, hi] = chunk(j);
             std::memcpy(static_cast<char *>(out) + lo * width,
                         static_cast<const char *>(outs[j]) + lo * width,
                         (hi - lo) * width);
           }
         }});
  }

  void reduceScatter(const void *in, void *out, int64_t count, DType type,
                     ReduceOp op, const std::vector<int64_t> &group) override {
    int64_t width = byteSize(type), index = indexIn(group);
    meet(in, group, [&](const std::vector<const void *> &ins) {
      std::memcpy(out,
                  static_cast<const char *>(ins[0]) + index * count * width,
                  count * width);
      for (size_t j = 1; j < ins.size(); ++j)
        reduceInto(out,
                   static_cast<const char *>(ins[j]) + index * count * width,
                   count, type, op);
    });
  }

  void allGather(const void *in, void *out, int64_t bytes,
                 const std::vector<int64_t> &group) override {
    meet(in, group, [&](const std::vector<const void *> &all) {
      for (size_t j = 0; j < all.size(); ++j)
        std::memcpy(static_cast<char *>(out) + j * bytes, all[j], bytes);
    });
  }

  void allToAll(const void *in, void *out, int64_t bytes,
                const std::vector<int64_t> &group) override {
    int64_t index = indexIn(group);
    meet(in, group, [&](const std::vector<const void *> &all) {
      for (size_t j = 0; j < all.size(); ++j)
        std::memcpy(static_cast<char *>(out) + j * bytes,
                    static_cast<const char *>(all[j]) + index * bytes, bytes);
    });
  }

  void permute(const void *in, void *out, int64_t bytes,
               const std::vector<int64_t> &pairs,
               const std::vector<int64_t> &group) override {
    int64_t index = indexIn(group);
    meet(in, group, [&](const std::vector<const void *> &all) {
      std::memset(out, 0, bytes);
      for (size_t k = 0; k + 1 < pairs.size(); k += 2)
        if (pairs[k + 1] == index)
          std::memcpy(out, all[pairs[k]], bytes);
    });
  }

  void gatherToRoot(const void *in, void *out, int64_t bytes) override {
    std::vector<int64_t> everyone(size());
    for (int64_t r = 0; r < size(); ++r)
      everyone[r] = r;
    meet(in, everyone, [&](const std::vector<const void *> &all) {
      if (me == 0)
        for (size_t j = 0; j < all.size(); ++j)
          std::memcpy(static_cast<char *>(out) + j * bytes, all[j], bytes);
    });
  }

  void barrier() override {
    std::vector<int64_t> everyone(size());
    for (int64_t r = 0; r < size(); ++r)
      everyone[r] = r;
    meet(nullptr, everyone, [](const std::vector<const void *> &) {});
  }

  [[noreturn]] void fail(const std::string &message) override {
    {
      std::lock_guard<std::mutex> lock(world.mutex);
      world.failed = true;
    }
    // One write, so lines of other ranks cannot cut into it.
    llvm::errs() << ("error: rank " + std::to_string(me) + ": " + message +
                     "\n");
    llvm::errs().flush();
    // Every rank is a thread of this process: end them all, non-zero.
    std::_Exit(1);
  }

private:
  int64_t indexIn(const std::vector<int64_t> &group) const {
    for (size_t j = 0; j < group.size(); ++j)
      if (group[j] == me)
        return j;
    return -1;
  }

  template <typename Fn>
  void meet(const void *in, const std::vector<int64_t> &group, Fn read) {
    meetPhases(in, nullptr, group,
               {[&](const std::vector<const void *> &ins,
                    const std::vector<void *> &) { read(ins); }});
  }

  /// Deposits `in` and `out`, waits for the group, then runs each phase
  /// with every member's pointers, all members finishing a phase before
  /// any starts the next; returns when all have finished reading.
  void meetPhases(const void *in, void *out, const std::vector<int64_t> &group,
                  const std::vector<Phase> &phases) {
    int64_t index = indexIn(group);
    if (index < 0)
      fail("internal error: a collective's group does not contain this rank");
    int64_t n = group.size();
    std::unique_lock<std::mutex> lock(world.mutex);
    auto key = std::make_pair(world.sequence[me]++, group.front());
    Slot &slot = world.slots[key];
    if (slot.inputs.empty()) {
      slot.inputs.resize(n);
      slot.outputs.resize(n);
      slot.done.assign(phases.size(), 0);
    }
    slot.inputs[index] = in;
    slot.outputs[index] = out;
    ++slot.deposited;
    world.changed.notify_all();
    auto deadline = std::chrono::steady_clock::now() + world.timeout;
    auto wait = [&](auto ready, const char *what) {
      while (!ready()) {
        if (world.changed.wait_until(lock, deadline) ==
                std::cv_status::timeout &&
            !ready()) {
          lock.unlock();
          fail(std::string("a collective waited more than ") +
               std::to_string(world.timeout.count()) + " s for " + what +
               " of its group; another rank failed or is stuck");
        }
      }
    };
    wait([&] { return slot.deposited == n; }, "the other members");
    std::vector<const void *> inputs = slot.inputs;
    std::vector<void *> outputs = slot.outputs;
    for (size_t p = 0; p < phases.size(); ++p) {
      lock.unlock();
      phases[p](inputs, outputs);
      lock.lock();
      ++slot.done[p];
      world.changed.notify_all();
      wait([&] { return slot.done[p] == n; }, "the other members to finish");
    }
    // The last member past the last wait erases the slot.
    if (++slot.deposited == 2 * n)
      world.slots.erase(key);
  }

  World &world;
  int64_t me;
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
