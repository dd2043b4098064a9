//===- Main.cpp - the main of every compiled Tessel program ---------------===//
//
// Parses the flags and the program's description (program/Program.h),
// checks that this machine can run the code, binds the arguments
// (Setup.cpp), and starts one rank per device: threads of this process, or
// the processes of mpirun. Each rank runs the steps (RankLoop.cpp).
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Run.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/runtime/CpuFeatures.h"
#include "tessel/support/CustomCalls.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <cstdlib>
#include <thread>

using namespace tessel;
using namespace tessel::rt;

extern "C" {
extern const char tessel_program[];
// The entry points, in the description's order (runtime/Abi.h).
extern void (*const tessel_entries[])(void **);
}

namespace {
llvm::cl::OptionCategory category("Tessel program options");
llvm::cl::opt<int64_t> ranksOpt("ranks",
                                llvm::cl::desc("Ranks to run as threads of "
                                               "this process (default: the "
                                               "mesh's device count)"),
                                llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<int64_t> steps("steps", llvm::cl::desc("Steps to run"),
                             llvm::cl::init(10), llvm::cl::cat(category));
llvm::cl::opt<int64_t> evalEvery(
    "eval-every",
    llvm::cl::desc("Run the program's evaluations (tessel-compile --eval) "
                   "every N steps, on the batch the next step takes, and "
                   "print their loss (default 0: after the last step only)"),
    llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<std::string> evalData(
    "eval-data",
    llvm::cl::desc("Token file of held-out batches for the evaluations: each "
                   "evaluation reads its first --eval-batches batches "
                   "(default: --data, from the batch the next step takes)"),
    llvm::cl::cat(category));
llvm::cl::opt<int64_t> evalBatches(
    "eval-batches",
    llvm::cl::desc("Batches per evaluation; the printed loss is their mean "
                   "(default 1)"),
    llvm::cl::init(1), llvm::cl::cat(category));
llvm::cl::opt<uint64_t> seed("seed",
                             llvm::cl::desc("Seed of the initialization, "
                                            "of generated batches and of "
                                            "dropout (a seed argument)"),
                             llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    dataFile("data",
             llvm::cl::desc("Token file (flat uint16/uint32, nanoGPT .bin) "
                            "for input_ids and labels"),
             llvm::cl::cat(category));
llvm::cl::opt<std::string> tokenType("token-type",
                                     llvm::cl::desc("uint16 or uint32"),
                                     llvm::cl::init("uint16"),
                                     llvm::cl::cat(category));
llvm::cl::opt<std::string>
    initFrom("init-from",
             llvm::cl::desc("safetensors file, Hugging Face index "
                            "(*.index.json) or directory of shards, with "
                            "arguments by name and "
                            "global shape: every parameter must be in it "
                            "(see --allow-missing), and every tensor in it "
                            "must name an argument or result"),
             llvm::cl::cat(category));
llvm::cl::opt<bool> allowMissing(
    "allow-missing",
    llvm::cl::desc("With --init-from: parameters the file lacks start from "
                   "their initialization (listed) instead of an error"),
    llvm::cl::cat(category));
llvm::cl::opt<std::string>
    saveFile("save",
             llvm::cl::desc("Write the last step's results (global shapes) "
                            "to this safetensors file"),
             llvm::cl::cat(category));
llvm::cl::opt<double> lrOpt("lr",
                            llvm::cl::desc("Peak learning rate (default: "
                                           "the one compiled in)"),
                            llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<int64_t>
    batchSize("batch-size",
              llvm::cl::desc("Global batch (sequences per optimizer step): "
                             "the compiled batch, or a multiple of it for a "
                             "program compiled with --accumulate"),
              llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    ckptDir("ckpt",
            llvm::cl::desc("Checkpoint directory (safetensors + index, "
                           "written atomically)"),
            llvm::cl::cat(category));
llvm::cl::opt<int64_t> saveEvery("save-every",
                                 llvm::cl::desc("Write a checkpoint every N "
                                                "steps (and after the last)"),
                                 llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<bool> resume("resume",
                           llvm::cl::desc("Continue from the latest "
                                          "checkpoint in --ckpt (--steps is "
                                          "the total to reach)"),
                           llvm::cl::cat(category));
llvm::cl::opt<std::string>
    traceFile("trace",
              llvm::cl::desc("Write a Chrome/Perfetto trace of every rank's "
                             "steps, matmuls and collectives (under MPI, one "
                             "file per rank: NAME.rankN.json)"),
              llvm::cl::cat(category));
llvm::cl::opt<double> peakTflops(
    "peak-tflops",
    llvm::cl::desc("Each rank's matmul peak in TFLOP/s, for the model FLOPs "
                   "utilization (MFU) in the progress lines (default: the "
                   "GPU's dense peak where Tessel knows it; none on CPUs)"),
    llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<int64_t> printEvery("print-every",
                                  llvm::cl::desc("Print progress every N "
                                                 "steps"),
                                  llvm::cl::init(1), llvm::cl::cat(category));
llvm::cl::opt<unsigned> timeoutSeconds(
    "timeout",
    llvm::cl::desc("Seconds a collective waits for the other ranks before "
                   "the run fails"),
    llvm::cl::init(30), llvm::cl::cat(category));
llvm::cl::opt<std::string> customCallLibraries(
    "custom-calls",
    llvm::cl::desc("Shared libraries of the program's custom-call kernels "
                   "(comma-separated; tessel/runtime/CustomCall.h)"),
    llvm::cl::value_desc("lib.so,..."), llvm::cl::cat(category));
llvm::cl::opt<std::string> metricsFile(
    "metrics",
    llvm::cl::desc("Append one JSON object per printed step and evaluation "
                   "to this file (JSON lines: step, loss, grad_norm, "
                   "ms_per_step, tokens_per_s; eval and eval_loss)"),
    llvm::cl::cat(category));
llvm::cl::opt<int64_t> threadsOpt(
    "threads",
    llvm::cl::desc("Host threads per rank for library calls (OpenBLAS); "
                   "default: OPENBLAS_NUM_THREADS if set, else the machine's "
                   "cores divided among its ranks"),
    llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<unsigned> ckptTimeout(
    "ckpt-timeout",
    llvm::cl::desc("Seconds the ranks wait while a checkpoint is gathered "
                   "and written before the run fails (default 1800)"),
    llvm::cl::init(1800), llvm::cl::cat(category));

// Fault injection, for the tests that check a failing rank stops the run.
llvm::cl::opt<int64_t> failRank("fail-rank",
                                llvm::cl::desc("Testing: this rank fails "
                                               "at --fail-step"),
                                llvm::cl::init(-1), llvm::cl::Hidden,
                                llvm::cl::cat(category));
llvm::cl::opt<int64_t> failStep("fail-step", llvm::cl::init(0),
                                llvm::cl::Hidden, llvm::cl::cat(category));
llvm::cl::opt<std::string> failMode("fail-mode",
                                    llvm::cl::desc("exit (dies) | hang"),
                                    llvm::cl::init("exit"), llvm::cl::Hidden,
                                    llvm::cl::cat(category));
llvm::cl::opt<std::string>
    failRegion("fail-region",
               llvm::cl::desc("Testing: fail when starting this schedule "
                              "action (as B0.1) of --fail-step"),
               llvm::cl::Hidden, llvm::cl::cat(category));

int failWith(const llvm::Twine &message) {
  // One write: rank threads may be printing (unbuffered stderr would let
  // their lines cut into the message).
  llvm::errs() << ("error: " + message + "\n").str();
  return 1;
}

/// Why this machine cannot run `target`'s code, or "". The features come
/// from the CPU, or from TESSEL_HOST_CPU_FEATURES (a comma-separated list;
/// for tests, or to refuse features on purpose).
std::string checkCpu(const CpuTarget &target) {
  if (target.cpu.empty())
    return "";
  std::vector<std::string> host;
  if (const char *given = std::getenv("TESSEL_HOST_CPU_FEATURES")) {
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(given).split(names, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef n : names)
      host.push_back(n.trim().str());
  } else {
    host = hostCpuFeatures();
  }
  return cpuMismatch(target, hostArch(), host);
}

/// Why the flags' values cannot run, or "".
std::string checkFlags() {
  auto atLeast = [](const char *flag, int64_t value, int64_t min) {
    return value < min ? std::string("--") + flag + " must be at least " +
                             std::to_string(min) + ", not " +
                             std::to_string(value)
                       : std::string();
  };
  for (std::string why :
       {atLeast("steps", steps, 0), atLeast("print-every", printEvery, 1),
        atLeast("save-every", saveEvery, 0), atLeast("ranks", ranksOpt, 0),
        atLeast("eval-every", evalEvery, 0),
        atLeast("eval-batches", evalBatches, 1),
        atLeast("timeout", timeoutSeconds, 1),
        atLeast("ckpt-timeout", ckptTimeout, 1),
        atLeast("threads", threadsOpt, 0)})
    if (!why.empty())
      return why;
  if (!(peakTflops >= 0))
    return "--peak-tflops must not be negative";
  if (batchSize < 0) // 0: the compiled batch
    return "--batch-size must be positive, not " + std::to_string(batchSize);
  if (tokenType != "uint16" && tokenType != "uint32")
    return "--token-type must be uint16 or uint32, not " + tokenType;
  return "";
}

Options options() {
  Options o;
  o.steps = steps;
  o.printEvery = printEvery;
  o.peakTflops = peakTflops;
  o.saveEvery = saveEvery;
  o.evalEvery = evalEvery;
  o.timeout = timeoutSeconds;
  o.ckptTimeout = ckptTimeout;
  o.evalBatches = evalBatches;
  o.evalDataFile = evalData;
  o.batchSize = batchSize;
  o.seed = seed;
  o.lr = lrOpt;
  o.resume = resume;
  o.dataFile = dataFile;
  o.tokenType = tokenType;
  o.initFrom = initFrom;
  o.allowMissing = allowMissing;
  o.saveFile = saveFile;
  o.ckptDir = ckptDir;
  o.traceFile = traceFile;
  o.failRank = failRank;
  o.failStep = failStep;
  o.failMode = failMode;
  o.failRegion = failRegion;
  return o;
}

/// Whether this process writes the run's checkpoints and metrics: the only
/// one (ranks as threads), or rank 0 of mpirun.
bool writesCheckpoints() {
  if (const std::optional<LaunchInfo> &launch = currentLaunch())
    return launch->rank == 0;
  if (!launchedByMpi())
    return true;
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *v = std::getenv(name))
      return std::atoi(v) == 0;
  return true;
}

/// The ranks on this machine: all of them as threads, or mpirun's local
/// processes.
int64_t localRanks(int64_t ranks) {
  if (const std::optional<LaunchInfo> &launch = currentLaunch())
    return std::max<int64_t>(1, launch->localSize);
  if (!launchedByMpi())
    return ranks;
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE",
                           "SLURM_NTASKS_PER_NODE"})
    if (const char *n = std::getenv(name))
      return std::max(1, std::atoi(n));
  return 1;
}

/// Runs the ranks; the return code is the run's. `writer`: this process
/// writes the run's files (threads, or rank 0 of MPI).
int launch(Run &run, int64_t ranks, bool &writer) {
  auto body = [&](Communicator &comm) {
    int r = runRank(run, comm);
    if (r)
      comm.fail("stopped");
    return r;
  };
  // One process per device: through the device's library (NCCL), else
  // MPI's.
  if (const std::optional<LaunchInfo> &launch = currentLaunch();
      launch && deviceHasCommunicator())
    return runProcessRank(*launch, std::chrono::seconds(timeoutSeconds),
                          [&](Communicator &comm) {
                            writer = comm.rank() == 0;
                            return body(comm);
                          });
  if (launchedByMpi()) {
    return runMpiRank(std::chrono::seconds(timeoutSeconds),
                      [&](Communicator &comm) {
                        writer = comm.rank() == 0;
                        return body(comm);
                      });
  }
  writer = true;
  if (!traceFile.empty())
    run.traces.resize(ranks);
  int rc = runThreadRanks(ranks, std::chrono::seconds(timeoutSeconds), body);
  if (rc || traceFile.empty())
    return rc;
  std::vector<std::pair<int64_t, std::vector<TraceEvent>>> all;
  for (int64_t r = 0; r < ranks; ++r)
    all.emplace_back(r, std::move(run.traces[r]));
  if (llvm::Error err = writeTrace(traceFile, all))
    return failWith(llvm::toString(std::move(err)));
  return 0;
}

} // namespace

/// The libraries tessel-compile --custom-calls copied beside the executable
/// (NAME.kernels/*.so), comma-separated; empty when there are none.
static std::string kernelsBeside(const char *argv0) {
  static int anchor;
  std::string exe =
      llvm::sys::fs::getMainExecutable(argv0, static_cast<void *>(&anchor));
  std::string dir = exe + ".kernels", list;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".so"))
      list += (list.empty() ? "" : ",") + it->path();
  return list;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "A training step compiled by Tessel\n");
  if (std::string why = checkFlags(); !why.empty())
    return failWith(why);
  if (llvm::Error err = tessel::customcalls::loadLibraries(
          customCallLibraries.empty() ? kernelsBeside(argv[0])
                                      : customCallLibraries.getValue()))
    return failWith(llvm::toString(std::move(err)));
  Run run;
  run.options = options();
  llvm::Expected<program::Program> program =
      program::parseProgram(tessel_program);
  if (!program)
    return failWith(llvm::toString(program.takeError()));
  run.program = std::move(*program);
  run.json = tessel_program;
  // Before any compiled code runs: never SIGILL in a kernel.
  if (std::string why = checkCpu(run.program.target); !why.empty())
    return failWith(why);
  if (llvm::Error err = prepareRun(
          run, llvm::ArrayRef(tessel_entries, run.program.entries.size())))
    return failWith(llvm::toString(std::move(err)));
  int64_t devices = run.worldSize;
  int64_t ranks = ranksOpt ? int64_t(ranksOpt) : devices;
  llvm::Expected<std::optional<LaunchInfo>> started = detectLaunch();
  if (!started)
    return failWith(llvm::toString(started.takeError()));
  if (*started && !deviceHasCommunicator() && !launchedByMpi())
    return failWith((*started)->launcher +
                    " started this program as one process per rank, but "
                    "the cpu target's processes communicate through MPI: "
                    "start it with mpirun, or as one process whose ranks "
                    "are threads");
  setCurrentLaunch(*started);
  bool processes = *started || launchedByMpi();
  if (processes && ranksOpt)
    return failWith("--ranks is for ranks as threads; under a launcher "
                    "(mpirun, srun, torchrun) the number of processes is "
                    "the number of ranks");
  if (*started && deviceHasCommunicator() && (*started)->size != devices)
    return failWith(llvm::Twine("this program was compiled for ") +
                    llvm::Twine(devices) + " devices, but " +
                    (*started)->launcher + " started " +
                    llvm::Twine((*started)->size) +
                    " processes; start one per device, or recompile with "
                    "another --mesh");
  if (ranks != devices && !processes)
    return failWith(llvm::Twine("this program was compiled for ") +
                    llvm::Twine(devices) + " devices, not --ranks " +
                    llvm::Twine(ranks) + "; recompile it with another --mesh");
  if (std::string why = prepareDevices(localRanks(ranks), threadsOpt);
      !why.empty())
    return failWith(why);
  // The process that writes checkpoints (threads, or MPI rank 0) holds the
  // directory for the whole run.
  std::unique_ptr<CheckpointLock> ckptLock;
  if (!ckptDir.empty() && writesCheckpoints()) {
    auto lock = lockCheckpointDir(ckptDir);
    if (!lock)
      return failWith(llvm::toString(lock.takeError()));
    ckptLock = std::move(*lock);
  }
  if (!metricsFile.empty() && writesCheckpoints()) {
    std::error_code ec;
    run.metrics = std::make_unique<llvm::raw_fd_ostream>(
        metricsFile, ec, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text);
    if (ec)
      return failWith("--metrics: cannot open " + metricsFile + ": " +
                      ec.message());
  }
  bool writer = false;
  if (int rc = launch(run, ranks, writer); rc || !writer)
    return rc;
  if (!saveFile.empty()) {
    NamedTensors out;
    std::set<std::string> saved; // a tensor two stages hold: the first's
    for (auto [k, e] : llvm::enumerate(run.entries))
      for (auto [r, info] : llvm::enumerate(e.entry->results))
        if (saved.insert(info.name).second)
          out.tensors.emplace_back(info.name,
                                 run.final.empty()
                                     ? HostTensor(info.dtype, info.globalShape)
                                     : std::move(run.final[k][r]));
    if (llvm::Error err = writeSafeTensors(saveFile, out))
      return failWith(llvm::toString(std::move(err)));
  }
  return 0;
}
