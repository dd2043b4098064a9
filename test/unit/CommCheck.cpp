//===- CommCheck.cpp - the communicator scenarios on any backend ----------===//
//
// tessel-comm-check runs test/unit/CommScenarios.h on 4 ranks: as MPI
// processes when started by mpirun, else as threads. Rank 0 prints "ok NAME"
// per scenario; a failure prints "FAIL rank R: NAME: WHAT" and exits 1.
//
//===----------------------------------------------------------------------===//

#include "CommScenarios.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace tessel;
using namespace tessel::rt;

static int check(Communicator &c) {
  int failures = 0;
  for (auto &[name, scenario] : scenarios::all()) {
    int mine = 0;
    scenario(c, [&, name = name](bool ok, const std::string &what) {
      if (ok)
        return;
      ++mine;
      llvm::errs() << ("FAIL rank " + std::to_string(c.rank()) + ": " + name +
                       ": " + what + "\n");
    });
    int64_t any = 0, count = mine;
    c.allReduce(&count, &any, 1, DType::I64, ReduceOp::Sum, c.world());
    if (c.rank() == 0 && any == 0)
      llvm::outs() << "ok " << name << "\n";
    failures += int(any);
  }
  if (c.rank() == 0)
    llvm::outs() << "backend " << c.backend() << ", " << c.size()
                 << " ranks, " << failures << " failures\n";
  return failures ? 1 : 0;
}

int main() {
  auto timeout = std::chrono::seconds(30);
  if (launchedByMpi())
    return runMpiRank(timeout, check);
  return runThreadRanks(4, timeout, check);
}
