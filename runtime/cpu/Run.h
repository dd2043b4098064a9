//===- Run.h - what the ranks of one run share ------------------*- C++ -*-===//
//
// main() (Main.cpp) parses the flags into Options; prepareRun (Setup.cpp)
// reads the program description and binds every argument to where its
// first value comes from; runRank (RankLoop.cpp) runs the steps on one rank.
// Every decision about an argument or a result follows its role in the
// description (program/Program.h), never its name.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CPU_RUN_H
#define TESSEL_RUNTIME_CPU_RUN_H

#include "tessel/program/Program.h"
#include "tessel/runtime/Communicator.h"
#include "tessel/support/SafeTensors.h"
#include "tessel/support/TokenFile.h"

#include "RankContext.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::rt {

/// The command line of a compiled program (docs/running.md).
struct Options {
  int64_t steps = 10, printEvery = 1, saveEvery = 0, batchSize = 0,
          evalEvery = 0, evalBatches = 1;
  /// Seconds a wait may last (--timeout), and while a checkpoint is written
  /// (--ckpt-timeout).
  int64_t timeout = 30, ckptTimeout = 1800;
  uint64_t seed = 0;
  double lr = 0;
  /// --peak-tflops: each rank's matmul peak, TFLOP/s, for the model FLOPs
  /// utilization (0: the device's, where known).
  double peakTflops = 0;
  bool resume = false, allowMissing = false;
  std::string dataFile, evalDataFile, tokenType = "uint16", initFrom,
      saveFile, ckptDir, metricsFile,
      traceFile;
  // Fault injection (tests).
  int64_t failRank = -1, failStep = 0;
  std::string failMode = "exit", failRegion;
};

/// Where an argument's first value comes from: bytes of a mapped file
/// (--init-from, --resume; each rank copies its block) or the counter-based
/// initialization (each rank computes its block only).
struct ArgumentSource {
  const uint8_t *mapped = nullptr;
  /// The global tensor assembled from parts of the file's tensors (the
  /// slices of a stacked parameter, a third of a Hugging Face GPT-2 fused
  /// projection); `mapped` points into it, or into the mapped file where
  /// the part is contiguous there.
  std::vector<uint8_t> stacked;
  /// The file's tensors it was assembled from.
  std::vector<std::string> assembledFrom;
  InitSpec spec;
  uint64_t stream = 0;
};

/// One entry point of the program, bound to the run's flags and files.
struct EntryRun {
  const program::Entry *entry = nullptr;
  const program::MeshInfo *mesh = nullptr;
  program::Bindings roles;
  std::vector<ArgumentSource> sources; ///< per argument
  /// The compiled function (tessel_entries[k] of runtime/Abi.h).
  void (*function)(void **buffers) = nullptr;
};

struct Run {
  Options options;
  program::Program program;
  /// Per entry of the description; each rank runs the one whose mesh has a
  /// position for it (several for the stages of a pipeline).
  std::vector<EntryRun> entries;
  /// The evaluation entries (kind "eval"), run beside the step entry of
  /// their mesh after the last step and every --eval-every steps.
  std::vector<EntryRun> evals;
  /// The init entries (kind "init"): run once before the first step, their
  /// results setting the step's carried arguments of the same names.
  std::vector<EntryRun> inits;
  int64_t worldSize = 1;
  std::vector<std::unique_ptr<MappedSafeTensors>> files;
  /// Gradient accumulation (programs compiled with --accumulate): calls per
  /// optimizer step.
  int64_t microSteps = 1;
  std::optional<TokenFile> tokens;
  /// --eval-data: held-out batches for the evaluations (else `tokens`).
  std::optional<TokenFile> evalTokens;
  int64_t vocab = 0, tokensPerStep = 0;
  /// A rank's matmul peak (FLOP/s) for the model FLOPs utilization: set by
  /// rank 0 at its first report (0: unknown; -1: not yet).
  double peakFlops = -1;
  int64_t firstStep = 0;
  std::chrono::steady_clock::time_point origin =
      std::chrono::steady_clock::now();
  std::vector<std::vector<TraceEvent>> traces; ///< per rank (threads)
  std::string json; ///< the program description, saved with checkpoints
  /// --metrics: one JSON object per printed step and evaluation (rank 0's
  /// process only; appended to, so a resumed run continues the file).
  std::unique_ptr<llvm::raw_fd_ostream> metrics;
  /// Global results per entry (rank 0), for --save (checkpoints are
  /// written in shards by every rank: SaveCheckpoint.cpp).
  std::vector<std::vector<HostTensor>> final;

  /// The entry `rank` runs.
  const EntryRun &entryOf(int64_t rank) const;
  /// The entry whose results include the loss (and grad norm), if any.
  const EntryRun *reporter() const;
};

/// Binds the arguments of `run.program` (parsed and validated) to the files
/// and flags of `run.options`; errors are the user's.
llvm::Error prepareRun(Run &run, llvm::ArrayRef<void (*)(void **)> functions);

/// Runs the steps on one rank.
int runRank(Run &run, Communicator &comm);

/// Writes the checkpoint after `stepsDone` steps, every rank together
/// (SaveCheckpoint.cpp): each carried tensor is assembled and written by
/// one owner rank into its shard file. `mine` is this rank's entry and
/// `local(r)` its block of that entry's result r.
void saveCheckpoint(Run &run, Communicator &comm, const EntryRun &mine,
                    llvm::function_ref<const uint8_t *(size_t)> local,
                    int64_t stepsDone);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CPU_RUN_H
