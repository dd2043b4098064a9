//===- RankLoop.cpp - the steps of one rank -------------------------------===//
//
// Each rank holds its blocks of the arguments and results (it materializes
// only its own blocks: initializations are computed per element from global
// indices), runs the entry point --steps times, and feeds each carried
// result into its argument for the next call.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Progress.h"
#include "Run.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/support/Random.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

using namespace tessel;
using namespace tessel::rt;
using program::TensorInfo;

namespace {

struct FreeBuffer {
  void operator()(uint8_t *p) const { freeDeviceMemory(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeBuffer>;

Buffer allocate(const TensorInfo &t) {
  // 64-byte aligned, as MLIR's own allocations.
  int64_t bytes = (std::max<int64_t>(t.bytes(), 1) + 63) / 64 * 64;
  auto *p = static_cast<uint8_t *>(allocateDeviceMemory(bytes));
  if (!p) {
    llvm::errs() << ("error: out of device memory for " + t.name + " (" +
                     std::to_string(bytes) + " bytes)\n");
    std::exit(1);
  }
  return Buffer(p);
}

/// This rank's index among the ranks of its machine: its rank when ranks
/// are threads, else what the launcher says.
int64_t localRankOf(const Communicator &comm) {
  if (const std::optional<LaunchInfo> &launch = currentLaunch())
    return launch->localRank;
  if (!launchedByMpi())
    return comm.rank();
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return 0;
}

/// An evaluation entry beside this rank's step: its own buffers, and the
/// step's argument it reads instead, where it has one.
struct Eval {
  const EntryRun *entry = nullptr;
  std::vector<Buffer> args, results; ///< args[a] null where fromStep[a]
  std::vector<std::optional<unsigned>> fromStep;
  std::optional<HostTensor> ids, labels;
};

/// One rank's entry, buffers and position.
struct Rank {
  Run &run;
  Communicator &comm;
  RankContext &ctx;
  const EntryRun &entry;
  const MeshShape &mesh;
  int64_t position; ///< on the entry's mesh
  std::vector<Buffer> args, results;
  std::optional<HostTensor> ids, labels; ///< global batches (--data)
  std::deque<Eval> evals; ///< deque: Eval is not nothrow-movable
  /// The metric results' elements, in order, averaged over the last
  /// optimizer step's micro-steps (as the loss is).
  std::vector<double> metrics;

  const TensorInfo &arg(unsigned a) const {
    return entry.entry->arguments[a];
  }

  /// Sets every element of scalar-role argument `a` to `value`.
  void setArgument(std::optional<unsigned> a, double value) {
    if (!a)
      return;
    HostTensor t(arg(*a).dtype, arg(*a).globalShape);
    for (int64_t e = 0; e < t.size(); ++e)
      t.setF(e, value);
    program::sliceBlock(t, arg(*a), mesh, position, args[*a].get());
  }
  /// Sets seed argument `a` for call `call` of the run: element i (one per
  /// microbatch of a pipeline, else one) gets callSeed of call * n + i, so
  /// microbatch i of a pipelined step has micro-step i's seed of the same
  /// step accumulated.
  void setSeed(std::optional<unsigned> a, uint64_t call) {
    if (!a)
      return;
    HostTensor t(arg(*a).dtype, arg(*a).globalShape);
    for (int64_t e = 0; e < t.size(); ++e)
      t.setI(e, int64_t(callSeed(run.options.seed, call * t.size() + e)));
    program::sliceBlock(t, arg(*a), mesh, position, args[*a].get());
  }
  double resultScalar(unsigned r) const {
    double f;
    int64_t i;
    loadElement(entry.entry->results[r].dtype, results[r].get(), f, i);
    return f;
  }
  /// Adds `weight` times every element of the metric results to `sums`.
  void addMetrics(std::vector<double> &sums, double weight) const {
    size_t at = 0;
    for (unsigned r : entry.roles.metrics) {
      const TensorInfo &info = entry.entry->results[r];
      int64_t width = byteSize(info.dtype);
      for (int64_t k = 0, n = numElements(info.shape); k < n; ++k) {
        double f;
        int64_t i;
        loadElement(info.dtype, results[r].get() + k * width, f, i);
        if (at == sums.size())
          sums.push_back(0);
        sums[at++] += weight * (isFloat(info.dtype) ? f : double(i));
      }
    }
  }
};

/// This rank's block of argument `a` of `e`, from its file or its
/// initialization.
Buffer materializeArgument(const Rank &rank, const EntryRun &e, unsigned a) {
  const TensorInfo &info = e.entry->arguments[a];
  Buffer buffer = allocate(info);
  const ArgumentSource &s = e.sources[a];
  if (s.mapped)
    program::sliceBlockBytes(s.mapped, info, rank.mesh, rank.position,
                             buffer.get());
  else
    program::fillBlock(info, s.spec, rank.run.options.seed, s.stream,
                       rank.mesh, rank.position, buffer.get());
  return buffer;
}

/// Global tensors of the token and label arguments' types, which batches
/// are filled into.
void batchTensors(const EntryRun &e, std::optional<HostTensor> &ids,
                  std::optional<HostTensor> &labels) {
  const program::Bindings &b = e.roles;
  const auto &args = e.entry->arguments;
  if (b.tokens)
    ids.emplace(args[*b.tokens].dtype, args[*b.tokens].globalShape);
  if (b.labels)
    labels.emplace(args[*b.labels].dtype, args[*b.labels].globalShape);
}

/// The evaluation entries on this rank's mesh, with their buffers.
void materializeEvals(Rank &rank) {
  for (const EntryRun &e : rank.run.evals) {
    if (e.entry->mesh != rank.entry.entry->mesh)
      continue;
    Eval &eval = rank.evals.emplace_back();
    eval.entry = &e;
    for (auto [a, info] : llvm::enumerate(e.entry->arguments)) {
      std::optional<unsigned> step;
      for (auto [s, stepArg] : llvm::enumerate(rank.entry.entry->arguments))
        if (stepArg.name == info.name && program::isCarried(stepArg.role))
          step = unsigned(s);
      eval.fromStep.push_back(step);
      eval.args.push_back(step ? Buffer() : materializeArgument(rank, e, a));
    }
    for (const TensorInfo &info : e.entry->results)
      eval.results.push_back(allocate(info));
    batchTensors(e, eval.ids, eval.labels);
  }
}

void materialize(Rank &rank) {
  for (unsigned a = 0; a < rank.entry.entry->arguments.size(); ++a)
    rank.args.push_back(materializeArgument(rank, rank.entry, a));
  for (const TensorInfo &info : rank.entry.entry->results)
    rank.results.push_back(allocate(info));
  batchTensors(rank.entry, rank.ids, rank.labels);
  materializeEvals(rank);
}

/// Batch `index` of `file` into the tokens and labels arguments of `e`.
void loadBatch(Rank &rank, const TokenFile &file, const EntryRun &e,
               std::optional<HostTensor> &ids,
               std::optional<HostTensor> &labels, std::vector<Buffer> &args,
               int64_t index) {
  Run &run = rank.run;
  const program::Bindings &b = e.roles;
  if (llvm::Error err = file.batch(index, ids ? &*ids : nullptr,
                                   labels ? &*labels : nullptr, run.vocab))
    rank.comm.fail(llvm::toString(std::move(err)));
  const auto &infos = e.entry->arguments;
  if (ids)
    program::sliceBlock(*ids, infos[*b.tokens], rank.mesh, rank.position,
                        args[*b.tokens].get());
  if (labels)
    program::sliceBlock(*labels, infos[*b.labels], rank.mesh, rank.position,
                        args[*b.labels].get());
}

/// One optimizer step: run.microSteps calls, the last one applying. Returns
/// the mean loss of the micro-steps.
double optimizerStep(Rank &rank, int64_t k) {
  Run &run = rank.run;
  const program::Bindings &b = rank.entry.roles;
  rank.setArgument(b.step, double(k));
  double lossSum = 0;
  rank.metrics.clear();
  std::vector<void *> buffers;
  for (int64_t j = 0; j < run.microSteps; ++j) {
    rank.setArgument(b.apply, j + 1 == run.microSteps ? 1.0 : 0.0);
    rank.setArgument(b.gradScale, 1.0 / double(run.microSteps));
    rank.setSeed(b.seed, k * run.microSteps + j);
    if (run.tokens && (b.tokens || b.labels))
      loadBatch(rank, *run.tokens, rank.entry, rank.ids, rank.labels,
                rank.args, k * run.microSteps + j);
    buffers.clear();
    for (auto &buffer : rank.args)
      buffers.push_back(buffer.get());
    for (auto &buffer : rank.results)
      buffers.push_back(buffer.get());
    rank.entry.function(buffers.data());
    closeRegion(rank.ctx);
    completeCommunication(rank.ctx);
    if (b.loss)
      lossSum += rank.resultScalar(*b.loss);
    rank.addMetrics(rank.metrics, 1.0 / double(run.microSteps));
    for (auto [r, a] : llvm::enumerate(b.feeds))
      if (a)
        std::swap(rank.results[r], rank.args[*a]);
  }
  return lossSum / double(run.microSteps);
}

/// Point-to-point tags of the runtime's own messages to rank 0 (below
/// MPI's guaranteed 32767): results by their index over all entries, and
/// the loss report (kReportTag) and evaluations' losses (kReportTag + 1).
constexpr int64_t kReportTag = 32000;

/// One call of evaluation `ev` on its batch `n` (of --eval-data, or of
/// --data from the batch step `stepsDone` takes); returns its loss.
double evalBatch(Rank &rank, Eval &ev, int64_t stepsDone, int64_t n) {
  Run &run = rank.run;
  const EntryRun &e = *ev.entry;
  const program::Bindings &b = e.roles;
  if (b.tokens || b.labels) {
    if (run.evalTokens)
      loadBatch(rank, *run.evalTokens, e, ev.ids, ev.labels, ev.args, n);
    else if (run.tokens)
      loadBatch(rank, *run.tokens, e, ev.ids, ev.labels, ev.args,
                stepsDone * run.microSteps + n);
  }
  std::vector<void *> buffers;
  for (auto [a, buffer] : llvm::enumerate(ev.args))
    buffers.push_back(ev.fromStep[a] ? rank.args[*ev.fromStep[a]].get()
                                     : buffer.get());
  for (auto &buffer : ev.results)
    buffers.push_back(buffer.get());
  e.function(buffers.data());
  completeCommunication(rank.ctx);
  double loss = 0;
  int64_t i;
  if (b.loss)
    loadElement(e.entry->results[*b.loss].dtype, ev.results[*b.loss].get(),
                loss, i);
  return loss;
}

/// Runs the evaluation entries after `stepsDone` steps (--eval-batches
/// batches each) and prints their mean losses (rank 0). Every rank takes
/// part in the report: an evaluation whose first rank is not rank 0 sends
/// its loss there.
void runEvals(Rank &rank, int64_t stepsDone) {
  Run &run = rank.run;
  for (const EntryRun &e : run.evals) {
    Eval *mine = nullptr;
    for (Eval &ev : rank.evals)
      if (ev.entry == &e)
        mine = &ev;
    double loss = 0;
    int64_t batches = run.options.evalBatches;
    for (int64_t n = 0; mine && n < batches; ++n)
      loss += evalBatch(rank, *mine, stepsDone, n) / double(batches);
    int64_t source = e.mesh->ranks().front();
    if (source != 0 && rank.comm.rank() == source)
      rank.comm.send(&loss, sizeof(loss), 0, kReportTag + 1, rank.comm.world());
    if (source != 0 && rank.comm.rank() == 0)
      rank.comm.recv(&loss, sizeof(loss), source, kReportTag + 1,
                     rank.comm.world());
    if (rank.comm.rank() == 0 && e.roles.loss) {
      llvm::outs() << "eval @" << e.entry->name << " after step "
                   << stepsDone - 1 << ": loss "
                   << llvm::format("%.6f", loss) << "\n";
      llvm::outs().flush();
      writeMetrics(run, llvm::json::Object{{"step", stepsDone - 1},
                                           {"eval", e.entry->name},
                                           {"eval_loss", loss}});
    }
  }
}

/// Runs the init entries on this rank's mesh and copies each result into
/// the step's carried argument of its name (validated to be laid out
/// alike, so the blocks match). Not on --resume: the checkpoint has them.
void runInits(Rank &rank) {
  Run &run = rank.run;
  if (run.options.resume)
    return;
  int64_t set = 0;
  for (const EntryRun &e : run.inits) {
    if (e.entry->mesh != rank.entry.entry->mesh)
      continue;
    std::vector<Buffer> args, results;
    std::vector<void *> buffers;
    for (unsigned a = 0; a < e.entry->arguments.size(); ++a) {
      args.push_back(materializeArgument(rank, e, a));
      buffers.push_back(args.back().get());
    }
    for (const TensorInfo &info : e.entry->results) {
      results.push_back(allocate(info));
      buffers.push_back(results.back().get());
    }
    e.function(buffers.data());
    completeCommunication(rank.ctx);
    for (auto [r, info] : llvm::enumerate(e.entry->results))
      for (auto [a, arg] : llvm::enumerate(rank.entry.entry->arguments))
        if (arg.name == info.name && program::isCarried(arg.role)) {
          std::memcpy(rank.args[a].get(), results[r].get(), info.bytes());
          ++set;
        }
  }
  if (set > 0 && rank.comm.rank() == 0)
    llvm::outs() << "tessel: init entries set " << set << " tensor"
                 << (set == 1 ? "" : "s") << " of the step\n";
}

/// Testing: --fail-rank dies (or hangs) at --fail-step, at its start or, with
/// --fail-region, when it starts that schedule action.
void maybeFail(const Options &o, RankContext &ctx, int64_t rank, int64_t k) {
  if (rank != o.failRank || k != o.failStep)
    return;
  if (o.failRegion.empty())
    failForTesting(rank, "step " + std::to_string(k), o.failMode);
  const std::vector<std::string> &names = *ctx.regionNames;
  auto it = llvm::find(names, o.failRegion);
  if (it == names.end())
    ctx.comm->fail("--fail-region " + o.failRegion + ": rank " +
                   std::to_string(rank) + " has no such action; its actions "
                   "are " + llvm::join(names, ", "));
  ctx.failAtRegion = it - names.begin();
  ctx.failMode = o.failMode;
}

/// Assembles every entry's global results on rank 0 from every rank's
/// blocks (`local(r)`: this rank's block of its entry's result r): each
/// rank sends its blocks to rank 0, which places them by position (for
/// --save; checkpoints are written in shards, SaveCheckpoint.cpp).
template <typename Fn>
void gatherResults(Rank &rank, Fn local) {
  Run &run = rank.run;
  Communicator &comm = rank.comm;
  bool root = comm.rank() == 0;
  if (root && run.final.empty())
    for (const EntryRun &e : run.entries) {
      run.final.emplace_back();
      for (const TensorInfo &info : e.entry->results)
        run.final.back().emplace_back(info.dtype, info.globalShape);
    }
  std::vector<Request> sends;
  int64_t tag = 0;
  for (auto [k, e] : llvm::enumerate(run.entries))
    for (auto [r, info] : llvm::enumerate(e.entry->results)) {
      int64_t bytes = info.bytes(), myTag = tag++;
      if (bytes == 0) // an empty tensor: nothing to gather (and no buffer)
        continue;
      bool mine = &e == &rank.entry;
      if (mine && !root)
        sends.push_back(
            comm.startSend(local(r), bytes, 0, myTag, comm.world()));
      if (!root)
        continue;
      std::vector<uint8_t> block(bytes);
      for (auto [position, source] : llvm::enumerate(e.mesh->ranks())) {
        const uint8_t *from = block.data();
        if (source == 0)
          from = local(r);
        else
          comm.recv(block.data(), bytes, source, myTag, comm.world());
        program::placeBlock(from, info, e.mesh->shape, int64_t(position),
                            run.final[k][r]);
      }
    }
  comm.waitAll(sends);
}

/// Rank 0 gets the loss, gradient norm and metrics of step k from the first
/// rank of the entry that computes them (a pipeline's last stage).
Report reportedValues(Rank &rank, double loss) {
  const EntryRun *reporter = rank.run.reporter();
  Report report;
  report.values = {loss, 0};
  if (!reporter)
    return report;
  int64_t source = reporter->mesh->ranks().front();
  const auto &results = reporter->entry->results;
  for (unsigned r : reporter->roles.metrics)
    report.values.resize(report.values.size() +
                         numElements(results[r].shape));
  if (&rank.entry == reporter) {
    if (reporter->roles.gradNorm)
      report.values[1] = rank.resultScalar(*reporter->roles.gradNorm);
    std::copy(rank.metrics.begin(), rank.metrics.end(),
              report.values.begin() + 2);
  }
  size_t bytes = report.values.size() * sizeof(double);
  if (source != 0 && rank.comm.rank() == source)
    rank.comm.send(report.values.data(), bytes, 0, kReportTag,
                   rank.comm.world());
  if (source != 0 && rank.comm.rank() == 0)
    rank.comm.recv(report.values.data(), bytes, source, kReportTag,
                   rank.comm.world());
  return report;
}

/// NAME.json -> NAME.rankN.json (one trace file per MPI process).
std::string traceFileFor(llvm::StringRef name, int64_t rank) {
  llvm::StringRef stem = name.ends_with(".json") ? name.drop_back(5) : name;
  return (stem + ".rank" + llvm::Twine(rank) + ".json").str();
}

void finishTrace(Rank &rank) {
  Run &run = rank.run;
  int64_t me = rank.comm.rank();
  finishDeviceTrace();
  if (!run.traces.empty()) { // threads: main writes every rank's events
    run.traces[me] = std::move(rank.ctx.events);
    return;
  }
  if (llvm::Error err = writeTrace(traceFileFor(run.options.traceFile, me),
                                   {{me, rank.ctx.events}}))
    rank.comm.fail(llvm::toString(std::move(err)));
}

/// Runs the steps; rank 0 reports.
void stepLoop(Rank &rank) {
  Run &run = rank.run;
  const Options &o = run.options;
  RankContext &ctx = rank.ctx;
  Stats stats;
  auto last = std::chrono::steady_clock::now();
  int64_t printed = run.firstStep;
  for (int64_t k = run.firstStep; k < o.steps; ++k) {
    maybeFail(o, ctx, rank.comm.rank(), k);
    auto start = std::chrono::steady_clock::now();
    double startUs = ctx.tracing ? ctx.nowUs() : 0;
    double flops = ctx.gemmFlops, gemm = ctx.gemmSeconds,
           comm = ctx.commSeconds;
    double loss = optimizerStep(rank, k);
    if (ctx.tracing)
      ctx.events.push_back({"step " + std::to_string(k), "step", startUs,
                            ctx.nowUs() - startUs});
    auto now = std::chrono::steady_clock::now();
    if (k > run.firstStep) {
      stats.seconds += std::chrono::duration<double>(now - start).count();
      stats.flops += ctx.gemmFlops - flops;
      stats.gemm += ctx.gemmSeconds - gemm;
      stats.comm += ctx.commSeconds - comm;
      ++stats.steps;
    }
    bool lastStep = k + 1 == o.steps;
    if ((k + 1) % o.printEvery == 0 || lastStep || k == run.firstStep) {
      Report report = reportedValues(rank, loss);
      double seconds = std::chrono::duration<double>(now - last).count();
      double ms = 1000.0 * seconds / std::max<int64_t>(k + 1 - printed, 1);
      printed = k + 1;
      last = now;
      if (rank.comm.rank() == 0) {
        if (run.peakFlops < 0)
          run.peakFlops = o.peakTflops > 0
                              ? o.peakTflops * 1e12
                              : devicePeakFlops(2 * ctx.halfGemmFlops >
                                                ctx.gemmFlops);
        printProgress(run, k, report, ms);
      }
    }
    // The step's results that feed arguments are now in `args`.
    const program::Bindings &roles = rank.entry.roles;
    auto local = [&](size_t r) -> const uint8_t * {
      return roles.feeds[r] ? rank.args[*roles.feeds[r]].get()
                            : rank.results[r].get();
    };
    if (!run.evals.empty() &&
        ((o.evalEvery > 0 && (k + 1) % o.evalEvery == 0) || lastStep))
      runEvals(rank, k + 1);
    bool save = !o.ckptDir.empty() &&
                ((o.saveEvery > 0 && (k + 1) % o.saveEvery == 0) || lastStep);
    // While results are gathered and rank 0 writes, the others wait up to
    // --ckpt-timeout, not --timeout: a slow disk is not a stuck rank.
    std::chrono::seconds limit = rank.comm.setWaitLimit(
        std::chrono::seconds(save ? o.ckptTimeout : o.timeout));
    if (lastStep && !o.saveFile.empty())
      gatherResults(rank, local);
    if (save)
      saveCheckpoint(run, rank.comm, rank.entry, local, k + 1);
    rank.comm.setWaitLimit(limit);
  }
  if (rank.comm.rank() == 0 && stats.steps > 0)
    printSummary(run, stats);
}

/// Every communicator group of the program, made by all ranks together
/// before the first step (a rank outside a group's mesh gets null).
void makeGroups(const program::Program &program, Communicator &comm,
                std::vector<std::unique_ptr<Group>> &groups) {
  for (const program::CommGroup &g : program.groups) {
    const program::MeshInfo &mesh = *program.findMesh(g.mesh);
    if (mesh.shape.numDevices() > comm.size())
      comm.fail("this program communicates on mesh '" + mesh.name +
                "' of " + std::to_string(mesh.shape.numDevices()) +
                " devices but runs on " + std::to_string(comm.size()) +
                " ranks; recompile it with another --mesh");
    groups.push_back(splitByPartition(comm, program::groupRanks(mesh, g)));
  }
}

} // namespace

int rt::runRank(Run &run, Communicator &comm) {
  if (comm.size() != run.worldSize)
    comm.fail("this program was compiled for " +
              std::to_string(run.worldSize) + " devices but runs on " +
              std::to_string(comm.size()) +
              " ranks; recompile it with another --mesh");
  if (std::string why = bindRankDevice(localRankOf(comm)); !why.empty())
    comm.fail(why);
  const EntryRun &entry = run.entryOf(comm.rank());
  RankContext ctx;
  ctx.comm = &comm;
  makeGroups(run.program, comm, ctx.groups);
  int64_t position = entry.mesh->positionOf(comm.rank());
  ctx.tracing = !run.options.traceFile.empty();
  ctx.regionNames = &entry.entry->regions;
  ctx.origin = run.origin;
  setCurrentRank(&ctx);
  if (comm.rank() == 0)
    printHeader(run, comm);
  Rank rank{run, comm, ctx, entry, entry.mesh->shape, position, {}, {}, {}, {}};
  materialize(rank);
  runInits(rank);
  stepLoop(rank);
  if (ctx.tracing)
    finishTrace(rank);
  setCurrentRank(nullptr);
  return 0;
}
