//===- Communicator.cpp - in-process collectives --------------------------===//

#include "tessel/interpreter/Communicator.h"

#include "llvm/Support/FormatVariadic.h"

using namespace tessel;
using namespace tessel::interp;

static llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::vector<std::shared_ptr<const HostTensor>>>
Communicator::exchange(int64_t device, const std::vector<int64_t> &members,
                       int64_t index, HostTensor mine) {
  std::unique_lock<std::mutex> lock(mutex);
  // Members start a group's collectives in the same order; counting per
  // group lets ranks of different programs (MPMD) do different numbers of
  // collectives in other groups.
  int64_t seq = sequence[{device, members}]++;
  auto key = std::make_pair(seq, members);
  Slot &slot = slots[key];
  if (slot.values.empty())
    slot.values.resize(members.size());
  slot.values[index] = std::make_shared<const HostTensor>(std::move(mine));
  ++slot.deposited;
  changed.notify_all();
  int64_t n = members.size();
  if (!changed.wait_for(lock, timeout, [&] {
        return aborted || slots[key].deposited == n;
      }))
    return fail(llvm::formatv("collective #{0} on device {1} timed out after "
                              "{2} s waiting for its group (do all devices "
                              "run the same collectives?)",
                              seq, device, timeout.count()));
  if (aborted)
    return fail("aborted because another rank failed");
  Slot &full = slots[key];
  std::vector<std::shared_ptr<const HostTensor>> result = full.values;
  if (++full.taken == n)
    slots.erase(key);
  return result;
}

void Communicator::send(int64_t channel, int64_t from, int64_t to,
                        HostTensor value) {
  std::lock_guard<std::mutex> lock(mutex);
  mailboxes[{channel, from, to}].push_back(std::move(value));
  changed.notify_all();
}

llvm::Expected<HostTensor> Communicator::recv(int64_t channel, int64_t from,
                                              int64_t to) {
  std::unique_lock<std::mutex> lock(mutex);
  auto key = std::make_tuple(channel, from, to);
  if (!changed.wait_for(lock, timeout, [&] {
        return aborted || !mailboxes[key].empty();
      }))
    return fail(llvm::formatv("recv on channel {0} from device {1} to device "
                              "{2} timed out after {3} s: no matching send",
                              channel, from, to, timeout.count()));
  if (aborted)
    return fail("aborted because another rank failed");
  HostTensor value = std::move(mailboxes[key].front());
  mailboxes[key].pop_front();
  return value;
}

void Communicator::abort() {
  std::lock_guard<std::mutex> lock(mutex);
  aborted = true;
  changed.notify_all();
}

std::string Communicator::undelivered() {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &[key, queue] : mailboxes)
    if (!queue.empty()) {
      auto [channel, from, to] = key;
      return llvm::formatv("a message sent on channel {0} by rank {1} to "
                           "rank {2} was never received ({3} left): does "
                           "rank {2} run the matching tessel.recv?",
                           channel, from, to, queue.size())
          .str();
    }
  return "";
}
