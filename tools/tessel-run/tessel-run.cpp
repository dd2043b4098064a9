//===- tessel-run.cpp - launch a compiled program as N ranks --------------===//
//
//   tessel-run -n 4 ./gpt --steps 100            ranks as threads (default)
//   tessel-run -n 8 --mpi ./gpt --steps 100      8 MPI processes (mpirun)
//   tessel-run -n 16 --hostfile hosts ./gpt ...  MPI over several hosts
//
// Everything after the program is passed to it unchanged. The exit status is
// the program's (or mpirun's).
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-run options");
static cl::opt<int> ranks("n",
                          cl::desc("Number of ranks (default: the "
                                   "program's mesh size)"),
                          cl::init(0), cl::cat(category));
static cl::opt<bool> mpi("mpi",
                         cl::desc("Run the ranks as MPI processes "
                                  "under mpirun"),
                         cl::cat(category));
static cl::opt<std::string> hostfile("hostfile",
                                     cl::desc("MPI hostfile (implies --mpi)"),
                                     cl::cat(category));
static cl::opt<std::string> mpirun("mpirun", cl::desc("The MPI launcher"),
                                   cl::init("mpirun"), cl::cat(category));
static cl::opt<std::string> program(cl::Positional, cl::Required,
                                    cl::desc("<program>"), cl::cat(category));
static cl::list<std::string> programArgs(cl::ConsumeAfter,
                                         cl::desc("<program arguments>..."));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Runs a program compiled by tessel-compile as "
                              "N ranks\n");
  std::vector<std::string> args;
  std::string exe;
  if (mpi || !hostfile.empty()) {
    llvm::ErrorOr<std::string> launcher = llvm::sys::findProgramByName(mpirun);
    if (!launcher) {
      llvm::errs() << "tessel-run: error: cannot find " << mpirun
                   << "; install OpenMPI (openmpi-bin) or drop --mpi to run "
                      "the ranks as threads\n";
      return 1;
    }
    exe = *launcher;
    args = {exe};
    if (ranks > 0)
      args.insert(args.end(), {"-np", std::to_string(ranks)});
    if (!hostfile.empty())
      args.insert(args.end(), {"--hostfile", hostfile});
    else // one machine: as many ranks as asked, whatever its core count
      args.push_back("--oversubscribe");
    if (geteuid() == 0)
      args.push_back("--allow-run-as-root");
    args.push_back(program);
  } else {
    exe = program;
    args = {program};
    if (ranks > 0)
      args.insert(args.end(), {"--ranks", std::to_string(ranks)});
  }
  args.insert(args.end(), programArgs.begin(), programArgs.end());
  llvm::SmallVector<llvm::StringRef> refs(args.begin(), args.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(exe, refs, std::nullopt, {}, 0, 0, &error);
  if (rc < 0) {
    llvm::errs() << "tessel-run: error: " << program << ": " << error << "\n";
    return 1;
  }
  return rc;
}
