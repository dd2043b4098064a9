//===- Main.cpp - the main of every compiled Tessel program ---------------===//
//
// Reads the program's description (runtime/Program.h), builds the global
// initial arguments (from the seed, mesh-independently, or from a
// safetensors file), starts one rank per device (threads), gives each its
// block of every argument, and runs the step function --steps times: results
// named like an argument feed that argument on the next step, `step` counts
// up, and input_ids/labels come from a token file when --data is given.
//
//===----------------------------------------------------------------------===//

#include "RankContext.h"
#include "tessel/runtime/Abi.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/runtime/CpuFeatures.h"
#include "tessel/runtime/Program.h"
#include "tessel/support/Random.h"
#include "tessel/support/SafeTensors.h"
#include "tessel/support/TokenFile.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

using namespace tessel;
using namespace tessel::rt;

extern "C" {
extern const char tessel_program[];
void tessel_entry(void **buffers);
// OpenBLAS's thread-count control (not in every cblas.h).
void openblas_set_num_threads(int);
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
llvm::cl::opt<uint64_t> seed("seed",
                             llvm::cl::desc("Seed of the initialization and "
                                            "of generated batches"),
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
             llvm::cl::desc("safetensors file with arguments by name and "
                            "global shape (others start from the seed)"),
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
llvm::cl::opt<int64_t> printEvery("print-every",
                                  llvm::cl::desc("Print progress every N "
                                                 "steps"),
                                  llvm::cl::init(1), llvm::cl::cat(category));
llvm::cl::opt<unsigned> timeoutSeconds(
    "timeout",
    llvm::cl::desc("Seconds a collective waits for the other ranks before "
                   "the run fails"),
    llvm::cl::init(30), llvm::cl::cat(category));

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

int failWith(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
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
        atLeast("timeout", timeoutSeconds, 1)})
    if (!why.empty())
      return why;
  if (batchSize < 0) // 0: the compiled batch
    return "--batch-size must be positive, not " + std::to_string(batchSize);
  if (tokenType != "uint16" && tokenType != "uint32")
    return "--token-type must be uint16 or uint32, not " + tokenType;
  return "";
}

/// What every rank shares: the program, its initial arguments, the data.
struct Run {
  Program program;
  std::vector<HostTensor> initial; // global, per argument (from the seed)
  /// Or the argument's bytes in a mapped file (--init-from, --resume):
  /// each rank copies only its block.
  std::vector<const uint8_t *> mapped;
  std::vector<std::unique_ptr<MappedSafeTensors>> files;
  std::vector<std::optional<unsigned>> feeds; // per result: argument fed
  std::optional<unsigned> stepArg, idsArg, labelsArg, lossResult, normResult;
  /// Gradient accumulation (programs compiled with --accumulate): calls per
  /// optimizer step and the arguments that drive them.
  int64_t microSteps = 1;
  std::optional<unsigned> applyArg, gradScaleArg;
  std::optional<TokenFile> tokens;
  int64_t vocab = 0, tokensPerStep = 0;
  int64_t firstStep = 0;
  std::chrono::steady_clock::time_point origin =
      std::chrono::steady_clock::now();
  std::vector<std::vector<TraceEvent>> traces; // per rank (threads)
  std::string json; // the program description, saved with checkpoints
  std::vector<HostTensor> final; // global, per result (rank 0)
};

/// NAME.json -> NAME.rankN.json (one trace file per MPI process).
std::string traceFileFor(int64_t rank) {
  llvm::StringRef name(traceFile);
  llvm::StringRef stem = name.ends_with(".json") ? name.drop_back(5) : name;
  return (stem + ".rank" + llvm::Twine(rank) + ".json").str();
}

/// Assembles the global results on rank 0 from every rank's blocks
/// (`local(r)`).
template <typename Fn>
void gatherResults(Run &run, Communicator &comm, Fn local) {
  const Program &p = run.program;
  for (auto [r, info] : llvm::enumerate(p.results)) {
    int64_t bytes = info.bytes();
    if (bytes == 0) // an empty tensor: nothing to gather (and no buffer)
      continue;
    std::vector<uint8_t> all(comm.rank() == 0 ? bytes * comm.size() : 0);
    comm.gatherToRoot(local(r), all.data(), bytes);
    if (comm.rank() == 0)
      for (int64_t dev = 0; dev < comm.size(); ++dev)
        placeBlock(all.data() + dev * bytes, info, p.mesh, dev, run.final[r]);
  }
}

void saveCheckpoint(Run &run, Communicator &comm, int64_t stepsDone) {
  if (comm.rank() == 0) {
    NamedTensors out;
    for (auto [r, info] : llvm::enumerate(run.program.results))
      if (run.feeds[r])
        out.tensors.emplace_back(info.name, run.final[r]);
    if (llvm::Error err = writeCheckpoint(ckptDir, stepsDone, out, run.json))
      comm.fail(llvm::toString(std::move(err)));
    llvm::outs() << "checkpoint: " << ckptDir << " after step " << stepsDone - 1
                 << "\n";
    llvm::outs().flush();
  }
  comm.barrier();
}

struct FreeBuffer {
  void operator()(uint8_t *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeBuffer>;

int runRank(Run &run, Communicator &comm) {
  const Program &p = run.program;
  RankContext ctx;
  ctx.comm = &comm;
  ctx.mesh = &p.mesh;
  ctx.device = comm.rank();
  ctx.tracing = !traceFile.empty();
  ctx.origin = run.origin;
  setCurrentRank(&ctx);
  int64_t dev = comm.rank();
  if (comm.size() != p.mesh.numDevices())
    comm.fail("this program was compiled for " +
              std::to_string(p.mesh.numDevices()) + " devices but runs on " +
              std::to_string(comm.size()) +
              " ranks; recompile it with "
              "another --mesh");
  if (dev == 0) {
    llvm::outs() << "tessel: @" << p.function << " on " << comm.size()
                 << (comm.size() == 1 ? " rank" : " ranks") << " ("
                 << comm.backend() << "), mesh";
    for (auto [axis, size] : llvm::zip(p.mesh.axisNames, p.mesh.axisSizes))
      llvm::outs() << " " << axis << "=" << size;
    if (p.mesh.axisNames.empty())
      llvm::outs() << " none (one device)";
    llvm::outs() << "\n";
  }

  auto allocate = [](const TensorInfo &t) {
    // 64-byte aligned, as MLIR's own allocations.
    int64_t bytes = (std::max<int64_t>(t.bytes(), 1) + 63) / 64 * 64;
    return Buffer(static_cast<uint8_t *>(std::aligned_alloc(64, bytes)));
  };
  std::vector<Buffer> args, results;
  for (auto [a, info] : llvm::enumerate(p.arguments)) {
    args.push_back(allocate(info));
    if (run.mapped[a])
      sliceBlockBytes(run.mapped[a], info, p.mesh, dev, args.back().get());
    else
      sliceBlock(run.initial[a], info, p.mesh, dev, args.back().get());
  }
  for (const TensorInfo &info : p.results)
    results.push_back(allocate(info));

  std::optional<HostTensor> ids, labels;
  // Token batches are filled into global tensors of the arguments' types.
  if (run.idsArg)
    ids = HostTensor(p.arguments[*run.idsArg].dtype,
                     p.arguments[*run.idsArg].globalShape);
  if (run.labelsArg)
    labels = HostTensor(p.arguments[*run.labelsArg].dtype,
                        p.arguments[*run.labelsArg].globalShape);

  std::vector<void *> buffers;
  struct {
    double seconds = 0, flops = 0, gemm = 0, comm = 0;
    int64_t steps = 0;
  } stats;
  auto last = std::chrono::steady_clock::now();
  int64_t printed = run.firstStep;
  for (int64_t k = run.firstStep; k < steps; ++k) {
    if (run.stepArg) {
      const TensorInfo &info = p.arguments[*run.stepArg];
      HostTensor t(info.dtype, info.globalShape);
      for (int64_t e = 0; e < t.size(); ++e)
        t.setI(e, k);
      sliceBlock(t, info, p.mesh, dev, args[*run.stepArg].get());
    }
    if (dev == failRank && k == failStep) {
      // One write, so lines of other ranks cannot cut into it.
      llvm::errs() << ("rank " + std::to_string(dev) + ": failing at step " +
                       std::to_string(k) + " (--fail-rank, for testing)\n");
      llvm::errs().flush();
      if (failMode == "hang")
        std::this_thread::sleep_for(std::chrono::hours(1));
      std::_Exit(3); // dies without a word to the others
    }
    auto scalar = [&](unsigned r) {
      double f;
      int64_t i;
      loadElement(p.results[r].dtype, results[r].get(), f, i);
      return f;
    };
    auto setScalar = [&](std::optional<unsigned> a, double value) {
      if (!a)
        return;
      const TensorInfo &info = p.arguments[*a];
      HostTensor t(info.dtype, info.globalShape);
      for (int64_t e = 0; e < t.size(); ++e)
        t.setF(e, value);
      sliceBlock(t, info, p.mesh, dev, args[*a].get());
    };
    auto stepStart = std::chrono::steady_clock::now();
    double stepStartUs = ctx.tracing ? ctx.nowUs() : 0;
    double flopsBefore = ctx.gemmFlops, gemmBefore = ctx.gemmSeconds,
           commBefore = ctx.commSeconds;
    // One optimizer step: run.microSteps calls, the last one applying.
    double lossSum = 0;
    for (int64_t j = 0; j < run.microSteps; ++j) {
      setScalar(run.applyArg, j + 1 == run.microSteps ? 1.0 : 0.0);
      setScalar(run.gradScaleArg, 1.0 / double(run.microSteps));
      if (run.tokens) {
        if (llvm::Error err = run.tokens->batch(
                k * run.microSteps + j, ids ? &*ids : nullptr,
                labels ? &*labels : nullptr, run.vocab))
          comm.fail(llvm::toString(std::move(err)));
        if (ids)
          sliceBlock(*ids, p.arguments[*run.idsArg], p.mesh, dev,
                     args[*run.idsArg].get());
        if (labels)
          sliceBlock(*labels, p.arguments[*run.labelsArg], p.mesh, dev,
                     args[*run.labelsArg].get());
      }
      buffers.clear();
      for (auto &b : args)
        buffers.push_back(b.get());
      for (auto &b : results)
        buffers.push_back(b.get());
      tessel_entry(buffers.data());
      if (run.lossResult)
        lossSum += scalar(*run.lossResult);
      for (auto [r, a] : llvm::enumerate(run.feeds))
        if (a)
          std::swap(results[r], args[*a]);
    }
    if (ctx.tracing)
      ctx.events.push_back({"step " + std::to_string(k), "step", stepStartUs,
                            ctx.nowUs() - stepStartUs});
    if (k > run.firstStep) { // the first step warms up caches and pages
      stats.seconds += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - stepStart)
                           .count();
      stats.flops += ctx.gemmFlops - flopsBefore;
      stats.gemm += ctx.gemmSeconds - gemmBefore;
      stats.comm += ctx.commSeconds - commBefore;
      ++stats.steps;
    }

    if (dev == 0 &&
        ((k + 1) % printEvery == 0 || k + 1 == steps || k == run.firstStep)) {
      auto now = std::chrono::steady_clock::now();
      double seconds = std::chrono::duration<double>(now - last).count();
      int64_t done = k + 1 - printed;
      printed = k + 1;
      last = now;
      llvm::outs() << "step " << k;
      // The loss of the whole (accumulated) batch: the micro-steps' mean.
      if (run.lossResult)
        llvm::outs() << llvm::format(": loss %.6f",
                                     lossSum / double(run.microSteps));
      if (run.normResult)
        llvm::outs() << llvm::format(", grad_norm %.6f",
                                     scalar(*run.normResult));
      double ms = 1000.0 * seconds / std::max<int64_t>(done, 1);
      llvm::outs() << llvm::format(", %.1f ms/step", ms);
      if (run.tokensPerStep)
        llvm::outs() << llvm::format(", %.0f tokens/s",
                                     run.tokensPerStep * 1000.0 / ms);
      llvm::outs() << "\n";
      llvm::outs().flush();
    }
    // The step's results that feed arguments are now in `args`.
    auto local = [&](size_t r) -> const uint8_t * {
      return run.feeds[r] ? args[*run.feeds[r]].get() : results[r].get();
    };
    bool lastStep = k + 1 == steps;
    bool save = !ckptDir.empty() &&
                ((saveEvery > 0 && (k + 1) % saveEvery == 0) || lastStep);
    if (save || (lastStep && !saveFile.empty()))
      gatherResults(run, comm, local);
    if (save)
      saveCheckpoint(run, comm, k + 1);
  }
  if (dev == 0 && stats.steps > 0) {
    // Rank 0's view; in SPMD programs every rank does the same work.
    double ms = 1000 * stats.seconds / stats.steps;
    llvm::outs() << llvm::format(
        "summary: %.2f ms/step over %lld steps after the first; matmuls "
        "%.3f GFLOP/step per rank, %.2f GFLOP/s per rank; time in matmuls "
        "%.0f%%, in collectives %.0f%%\n",
        ms, (long long)stats.steps, stats.flops / stats.steps / 1e9,
        stats.flops / stats.seconds / 1e9, 100 * stats.gemm / stats.seconds,
        100 * stats.comm / stats.seconds);
    llvm::outs().flush();
  }
  if (ctx.tracing) {
    if (run.traces.empty()) { // MPI: this process's rank only
      if (llvm::Error err = writeTrace(traceFileFor(dev), {{dev, ctx.events}}))
        comm.fail(llvm::toString(std::move(err)));
    } else {
      run.traces[dev] = std::move(ctx.events);
    }
  }
  setCurrentRank(nullptr);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "A training step compiled by Tessel\n");
  if (std::string why = checkFlags(); !why.empty())
    return failWith(why);
  Run run;
  llvm::Expected<Program> program = parseProgram(tessel_program);
  if (!program)
    return failWith(llvm::toString(program.takeError()));
  run.program = std::move(*program);
  const Program &p = run.program;
  // Before any compiled code runs: never SIGILL in a kernel.
  if (std::string why = checkCpu(p.target); !why.empty())
    return failWith(why);
  int64_t devices = p.mesh.numDevices();
  int64_t ranks = ranksOpt ? int64_t(ranksOpt) : devices;
  if (ranks != devices && !launchedByMpi())
    return failWith(llvm::Twine("this program was compiled for ") +
                    llvm::Twine(devices) + " devices, not --ranks " +
                    llvm::Twine(ranks) + "; recompile it with another --mesh");

  MappedSafeTensors *given = nullptr;
  if (!initFrom.empty()) {
    llvm::Expected<MappedSafeTensors> file = MappedSafeTensors::open(initFrom);
    if (!file)
      return failWith(llvm::toString(file.takeError()));
    run.files.push_back(std::make_unique<MappedSafeTensors>(std::move(*file)));
    given = run.files.back().get();
  }
  run.mapped.assign(p.arguments.size(), nullptr);
  llvm::StringMap<unsigned> argIndex;
  for (auto [a, info] : llvm::enumerate(p.arguments)) {
    argIndex[info.name] = a;
    if (const SafeTensorsIndex::Entry *e =
            given ? given->index.find(info.name) : nullptr) {
      if (e->dtype != info.dtype ||
          llvm::ArrayRef<int64_t>(e->shape) !=
              llvm::ArrayRef<int64_t>(info.globalShape))
        return failWith(initFrom + ": tensor '" + info.name + "' is " +
                        typeString(e->dtype, e->shape) +
                        " but the program needs " +
                        typeString(info.dtype, info.globalShape));
      run.mapped[a] = given->bytesOf(*e);
      run.initial.emplace_back();
      continue;
    }
    llvm::Expected<InitSpec> spec = parseInitSpec(info.init);
    if (!spec)
      return failWith("argument '" + info.name +
                      "': " + llvm::toString(spec.takeError()));
    HostTensor t(info.dtype, info.globalShape);
    fillTensor(t, *spec, seed, streamOf(info.name));
    run.initial.push_back(std::move(t));
    if (info.name == "input_ids" && spec->kind == InitSpec::IntRange)
      run.vocab = spec->b;
  }
  for (auto [r, info] : llvm::enumerate(p.results)) {
    run.final.emplace_back(info.dtype, info.globalShape);
    run.feeds.push_back(std::nullopt);
    if (info.name == "loss")
      run.lossResult = r;
    if (info.name == "grad_norm")
      run.normResult = r;
    auto it = argIndex.find(info.name);
    if (it == argIndex.end())
      continue;
    const TensorInfo &arg = p.arguments[it->second];
    if (arg.dtype != info.dtype || arg.shape != info.shape ||
        arg.dims != info.dims)
      return failWith("result '" + info.name +
                      "' is laid out differently from the argument it "
                      "feeds; the compiler keeps them equal, so this "
                      "program is damaged");
    run.feeds.back() = it->second;
  }
  run.json = tessel_program;
  if (lrOpt != 0) {
    auto it = argIndex.find("lr");
    if (it == argIndex.end())
      return failWith("--lr: this program has its learning rate compiled "
                      "in; compile it with tessel-compile (which makes it an "
                      "argument) to set it at run time");
    if (!(lrOpt > 0))
      return failWith("--lr must be positive");
    const TensorInfo &info = p.arguments[it->second];
    HostTensor t(info.dtype, info.globalShape);
    for (int64_t e = 0; e < t.size(); ++e)
      t.setF(e, lrOpt);
    run.initial[it->second] = std::move(t);
    run.mapped[it->second] = nullptr;
  }
  for (auto [name, slot] : {std::pair{"apply", &run.applyArg},
                            std::pair{"grad_scale", &run.gradScaleArg}}) {
    auto it = argIndex.find(name);
    if (it != argIndex.end())
      *slot = it->second;
  }
  if (batchSize != 0) {
    auto it = argIndex.find("input_ids");
    if (it == argIndex.end())
      it = argIndex.find("labels");
    int64_t compiled = it == argIndex.end() ||
                               p.arguments[it->second].globalShape.empty()
                           ? -1
                           : p.arguments[it->second].globalShape[0];
    if (compiled <= 0)
      return failWith("--batch-size: this program has no input_ids or labels "
                      "argument whose first dimension is the batch");
    if (batchSize % compiled != 0)
      return failWith("--batch-size " + llvm::Twine(int64_t(batchSize)) +
                      " is not a multiple of the compiled global batch of " +
                      llvm::Twine(compiled) + " sequences");
    run.microSteps = batchSize / compiled;
    if (run.microSteps > 1 && !(run.applyArg && run.gradScaleArg))
      return failWith("--batch-size " + llvm::Twine(int64_t(batchSize)) +
                      " needs " + llvm::Twine(run.microSteps) +
                      " micro-batches of the compiled " +
                      llvm::Twine(compiled) +
                      " per step; compile with tessel-compile --accumulate "
                      "(gradient accumulation) or generate the model with "
                      "that batch (tessel-models --batch)");
  }
  if (resume) {
    if (ckptDir.empty())
      return failWith("--resume needs --ckpt DIR");
    llvm::Expected<Checkpoint> c = readLatestCheckpoint(ckptDir);
    if (!c)
      return failWith(llvm::toString(c.takeError()));
    run.files.push_back(
        std::make_unique<MappedSafeTensors>(std::move(c->file)));
    const MappedSafeTensors &file = *run.files.back();
    for (auto [r, a] : llvm::enumerate(run.feeds)) {
      if (!a)
        continue;
      const TensorInfo &info = p.arguments[*a];
      const SafeTensorsIndex::Entry *e = file.index.find(info.name);
      if (!e && llvm::StringRef(info.name).contains(".accum."))
        continue; // a running gradient sum starts at zero
      if (!e)
        return failWith(file.path + ": tensor '" + info.name +
                        "' is missing; this program needs it to resume (was "
                        "the checkpoint written with another model or "
                        "optimizer?)");
      if (e->dtype != info.dtype ||
          llvm::ArrayRef<int64_t>(e->shape) !=
              llvm::ArrayRef<int64_t>(info.globalShape))
        return failWith(file.path + ": tensor '" + info.name + "' is " +
                        typeString(e->dtype, e->shape) +
                        " but the program needs " +
                        typeString(info.dtype, info.globalShape));
      run.mapped[*a] = file.bytesOf(*e);
    }
    run.firstStep = c->step;
    if (run.firstStep >= steps)
      return failWith(file.path + " is after step " +
                      llvm::Twine(run.firstStep) +
                      "; give --steps above it "
                      "(--steps counts all steps, resumed ones included)");
    llvm::outs() << "resuming from " << file.path << " at step "
                 << run.firstStep << "\n";
  }
  for (auto [name, slot] :
       {std::pair{"step", &run.stepArg}, std::pair{"input_ids", &run.idsArg},
        std::pair{"labels", &run.labelsArg}}) {
    auto it = argIndex.find(name);
    if (it != argIndex.end())
      *slot = it->second;
  }
  if (run.idsArg)
    run.tokensPerStep = numElements(p.arguments[*run.idsArg].globalShape) *
                        run.microSteps;
  if (!dataFile.empty()) {
    if (!run.idsArg && !run.labelsArg)
      return failWith("--data: the program has no argument named input_ids "
                      "or labels");
    llvm::Expected<TokenFile> file =
        TokenFile::open(dataFile, tokenType == "uint16" ? 2 : 4);
    if (!file)
      return failWith(llvm::toString(file.takeError()));
    run.tokens = std::move(*file);
    // The first batch now, so a file that is too short or holds tokens
    // outside the vocabulary fails before the ranks start.
    std::optional<HostTensor> ids, labels;
    if (run.idsArg)
      ids = HostTensor(p.arguments[*run.idsArg].dtype,
                       p.arguments[*run.idsArg].globalShape);
    if (run.labelsArg)
      labels = HostTensor(p.arguments[*run.labelsArg].dtype,
                          p.arguments[*run.labelsArg].globalShape);
    if (llvm::Error err =
            run.tokens->batch(run.firstStep, ids ? &*ids : nullptr,
                              labels ? &*labels : nullptr, run.vocab))
      return failWith(llvm::toString(std::move(err)));
  }

  // OpenBLAS threads share the cores with the ranks on this machine.
  bool mpi = launchedByMpi();
  int64_t local = ranks;
  if (mpi) {
    local = 1;
    if (const char *n = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
      local = std::max(1, std::atoi(n));
  }
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  openblas_set_num_threads(std::max<int>(1, cores / local));
  auto body = [&](Communicator &comm) {
    int r = runRank(run, comm);
    if (r)
      comm.fail("stopped");
    return r;
  };
  int rc = 0;
  if (mpi) {
    if (ranksOpt)
      return failWith("--ranks is for ranks as threads; under mpirun the "
                      "number of processes is the number of ranks");
    bool root = false;
    rc = runMpiRank(std::chrono::seconds(timeoutSeconds),
                    [&](Communicator &comm) {
                      root = comm.rank() == 0;
                      return body(comm);
                    });
    if (!root)
      return rc; // rank 0 writes the files
  } else {
    if (!traceFile.empty())
      run.traces.resize(ranks);
    rc = runThreadRanks(ranks, std::chrono::seconds(timeoutSeconds), body);
    if (!rc && !traceFile.empty()) {
      std::vector<std::pair<int64_t, std::vector<TraceEvent>>> all;
      for (int64_t r = 0; r < ranks; ++r)
        all.emplace_back(r, std::move(run.traces[r]));
      if (llvm::Error err = writeTrace(traceFile, all))
        return failWith(llvm::toString(std::move(err)));
    }
  }
  if (rc)
    return rc;
  if (!saveFile.empty()) {
    NamedTensors out;
    for (auto [r, info] : llvm::enumerate(p.results))
      out.tensors.emplace_back(info.name, std::move(run.final[r]));
    if (llvm::Error err = writeSafeTensors(saveFile, out))
      return failWith(llvm::toString(std::move(err)));
  }
  return 0;
}
