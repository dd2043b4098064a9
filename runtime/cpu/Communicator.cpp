//===- Communicator.cpp - what every communicator backend shares ----------===//

#include "tessel/runtime/Communicator.h"

using namespace tessel;
using namespace tessel::rt;

rt::Group::~Group() = default;
rt::PendingOperation::~PendingOperation() = default;
rt::Communicator::~Communicator() = default;

std::unique_ptr<Group>
rt::splitByPartition(Communicator &comm,
                     const std::vector<std::vector<int64_t>> &partition) {
  for (size_t color = 0; color < partition.size(); ++color)
    for (size_t index = 0; index < partition[color].size(); ++index)
      if (partition[color][index] == comm.rank())
        return comm.split(int64_t(color), int64_t(index));
  return comm.split(-1, 0);
}
