//===- Communicator.h - in-process collectives for the interpreter -*- C++ -*-//
//
// Ranks are threads of one process. Every collective is built from one
// primitive, exchange: each member of a group deposits its tensor and
// receives every member's tensor ordered by group index. The k-th collective
// a rank executes in a group matches the k-th collective of the other
// members in that group (programs have no data-dependent control flow). A wait that
// exceeds the timeout, or an abort by another rank, fails instead of hanging.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_INTERPRETER_COMMUNICATOR_H
#define TESSEL_INTERPRETER_COMMUNICATOR_H

#include "tessel/support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace tessel::interp {

class Communicator {
public:
  explicit Communicator(int64_t numDevices,
                        std::chrono::seconds timeout = std::chrono::seconds(60))
      : timeout(timeout) {
    (void)numDevices;
  }

  /// Deposits `mine` for `device` (group index `index` of `members`) and
  /// returns every member's tensor by group index.
  llvm::Expected<std::vector<std::shared_ptr<const HostTensor>>>
  exchange(int64_t device, const std::vector<int64_t> &members, int64_t index,
           HostTensor mine);

  void send(int64_t channel, int64_t from, int64_t to, HostTensor value);
  llvm::Expected<HostTensor> recv(int64_t channel, int64_t from, int64_t to);

  /// Makes every waiting and future call fail (a rank hit an error).
  void abort();

  /// After every rank has finished: a description of the first message
  /// sent but never received, or "" when every send was received.
  std::string undelivered();

private:
  struct Slot {
    std::vector<std::shared_ptr<const HostTensor>> values;
    int64_t deposited = 0, taken = 0;
  };
  std::mutex mutex;
  std::condition_variable changed;
  /// Collectives executed per (device, group).
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> sequence;
  std::map<std::pair<int64_t, std::vector<int64_t>>, Slot> slots; // (seq, group)
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<HostTensor>>
      mailboxes; // (channel, from, to)
  bool aborted = false;
  std::chrono::seconds timeout;
};

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_COMMUNICATOR_H
