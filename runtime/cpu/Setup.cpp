//===- Setup.cpp - binding a program's arguments before the ranks start ---===//
//
// Everything that can be wrong with the flags, the files they name or the
// program description is found here, before any rank runs.
//
//===----------------------------------------------------------------------===//

#include "HuggingFace.h"
#include "Run.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/support/Random.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"
#include "llvm/ADT/StringSet.h"

using namespace tessel;
using namespace tessel::rt;
using program::Role;
using program::TensorInfo;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A mapped tensor of a file must have the argument's dtype and global
/// shape.
llvm::Error checkStored(const std::string &path,
                        const SafeTensorsIndex::Entry &e,
                        const TensorInfo &info) {
  if (e.dtype == info.dtype && llvm::ArrayRef<int64_t>(e.shape) ==
                                   llvm::ArrayRef<int64_t>(info.globalShape))
    return llvm::Error::success();
  return fail(path + ": tensor '" + info.name + "' is " +
              typeString(e.dtype, e.shape) + " but the program needs " +
              typeString(info.dtype, info.globalShape));
}

/// Hugging Face stores some stacked parameters one slice per tensor:
/// Mixtral's `...experts.3.w1.weight` is row 3 of Tessel's
/// `...experts.w1.weight` [E, F, H]. The file's slices of `info`
/// (`PREFIX.k.SUFFIX` for `PREFIX.SUFFIX`, k = 0 .. E-1), if it has the
/// first one; an error where some are missing or of another type.
llvm::Expected<std::vector<const SafeTensorsIndex::Entry *>>
stackedSlices(const MappedSafeTensors &file, const TensorInfo &info) {
  std::vector<const SafeTensorsIndex::Entry *> slices;
  if (info.globalShape.empty() || info.globalShape[0] == 0)
    return slices;
  Shape row(info.globalShape.begin() + 1, info.globalShape.end());
  for (size_t p = info.name.find('.'); p != std::string::npos;
       p = info.name.find('.', p + 1)) {
    auto nameOf = [&](int64_t k) {
      return info.name.substr(0, p) + "." + std::to_string(k) +
             info.name.substr(p);
    };
    if (!file.index.find(nameOf(0)))
      continue;
    for (int64_t k = 0; k < info.globalShape[0]; ++k) {
      const SafeTensorsIndex::Entry *e = file.index.find(nameOf(k));
      if (!e)
        return fail(file.path + " has " + std::to_string(k) + " of the " +
                    std::to_string(info.globalShape[0]) + " slices " +
                    nameOf(0) + " .. " + nameOf(info.globalShape[0] - 1) +
                    " of parameter '" + info.name + "'");
      if (e->dtype != info.dtype || e->shape != row)
        return fail(file.path + ": tensor '" + e->name + "' is " +
                    typeString(e->dtype, e->shape) + " but a slice of '" +
                    info.name + "' is " + typeString(info.dtype, row));
      slices.push_back(e);
    }
    return slices;
  }
  return slices;
}

/// Every argument from its initialization, or from --init-from where the
/// file has it (whole, or as slices of a stacked parameter).
llvm::Error bindSources(Run &run, EntryRun &e) {
  const Options &o = run.options;
  MappedSafeTensors *given = nullptr;
  if (!o.initFrom.empty()) {
    if (run.files.empty()) {
      llvm::Expected<MappedSafeTensors> file =
          MappedSafeTensors::openAny(o.initFrom);
      if (!file)
        return file.takeError();
      run.files.push_back(
          std::make_unique<MappedSafeTensors>(std::move(*file)));
    }
    given = run.files.front().get();
  }
  for (const TensorInfo &info : e.entry->arguments) {
    ArgumentSource &source = e.sources.emplace_back();
    if (const SafeTensorsIndex::Entry *e =
            given ? given->index.find(info.name) : nullptr) {
      if (llvm::Error err = checkStored(given->pathOf(*e), *e, info))
        return err;
      source.mapped = given->bytesOf(*e);
      continue;
    }
    if (given) {
      auto slices = stackedSlices(*given, info);
      if (!slices)
        return slices.takeError();
      for (const SafeTensorsIndex::Entry *s : *slices) {
        const uint8_t *bytes = given->bytesOf(*s);
        source.stacked.insert(source.stacked.end(), bytes,
                              bytes + (s->end - s->begin));
        source.assembledFrom.push_back(s->name);
      }
      if (slices->empty()) { // a Hugging Face GPT-2 name or layout?
        llvm::Expected<AssembledTensor> gpt2 = gpt2Parameter(*given, info);
        if (!gpt2)
          return gpt2.takeError();
        source.mapped = gpt2->mapped; // the file's bytes, or `bytes`
        source.stacked = std::move(gpt2->bytes);
        source.assembledFrom = std::move(gpt2->from);
      }
      if (!source.stacked.empty())
        source.mapped = source.stacked.data();
      if (!source.assembledFrom.empty())
        continue;
    }
    llvm::Expected<InitSpec> spec = parseInitSpec(info.init);
    if (!spec)
      return fail("argument '" + info.name +
                  "': " + llvm::toString(spec.takeError()));
    source.spec = *spec;
    source.stream = streamOf(info.name);
    if (info.role == Role::Tokens && spec->kind == InitSpec::IntRange)
      run.vocab = spec->b;
  }
  return llvm::Error::success();
}

/// Names joined for a message, at most `limit` of them.
std::string nameList(const std::vector<std::string> &names, size_t limit = 8) {
  std::string out;
  for (size_t k = 0; k < names.size() && k < limit; ++k)
    out += (k ? ", " : "") + names[k];
  if (names.size() > limit)
    out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

/// --init-from names what it initializes: a tensor that matches no argument
/// or result of the program is an error (a renamed checkpoint would
/// otherwise train from random weights), and so is a parameter the file
/// lacks unless --allow-missing, which lists them.
llvm::Error checkInitFrom(Run &run) {
  const Options &o = run.options;
  if (o.initFrom.empty())
    return llvm::Error::success();
  const MappedSafeTensors &file = *run.files.front();
  llvm::StringSet<> known;
  std::vector<std::string> missing;
  for (const EntryRun &e : run.entries) {
    for (const auto &[info, source] :
         llvm::zip(e.entry->arguments, e.sources)) {
      known.insert(info.name);
      if (!source.assembledFrom.empty()) { // what it was read from, too
        for (const std::string &name : source.assembledFrom)
          known.insert(name);
        continue;
      }
      if (info.role == Role::Parameter && !file.index.find(info.name))
        missing.push_back(info.name);
    }
    for (const TensorInfo &info : e.entry->results)
      known.insert(info.name); // a --save of this program
  }
  std::vector<std::string> unknown;
  bool gpt2 = isGpt2File(file);
  for (const SafeTensorsIndex::Entry &t : file.index.entries)
    if (!known.contains(t.name) && !(gpt2 && isGpt2Buffer(t.name)))
      unknown.push_back(t.name);
  if (!unknown.empty())
    return fail(file.path + ": tensor" + (unknown.size() > 1 ? "s " : " ") +
                nameList(unknown) + " match" +
                (unknown.size() > 1 ? "" : "es") +
                " no argument or result of this program; rename or drop " +
                (unknown.size() > 1 ? "them" : "it") +
                " (tessel-compile --print-program lists the names)");
  if (missing.empty())
    return llvm::Error::success();
  if (!o.allowMissing)
    return fail(file.path + " lacks parameter" +
                (missing.size() > 1 ? "s " : " ") + nameList(missing) +
                "; pass --allow-missing to start them from their "
                "initialization");
  llvm::outs() << "tessel: --init-from: " << missing.size() << " parameter"
               << (missing.size() > 1 ? "s" : "") << " not in " << file.path
               << " start from their initialization: " << nameList(missing)
               << "\n";
  return llvm::Error::success();
}

llvm::Error bindLearningRate(Run &run) {
  double lr = run.options.lr;
  if (lr == 0)
    return llvm::Error::success();
  if (!(lr > 0))
    return fail("--lr must be positive");
  bool bound = false;
  for (EntryRun &e : run.entries) {
    if (!e.roles.learningRate)
      continue;
    ArgumentSource &source = e.sources[*e.roles.learningRate];
    source.mapped = nullptr;
    source.spec = InitSpec{InitSpec::Constant, lr, 0.0};
    bound = true;
  }
  if (!bound)
    return fail("--lr: this program has its learning rate compiled in; "
                "compile it with tessel-compile (which makes it an argument) "
                "to set it at run time");
  return llvm::Error::success();
}

/// --batch-size: micro-steps of the compiled batch per optimizer step.
llvm::Error bindBatchSize(Run &run) {
  int64_t batch = run.options.batchSize;
  if (batch == 0)
    return llvm::Error::success();
  if (run.entries.size() > 1 && !run.entries[0].entry->regions.empty())
    return fail("--batch-size: a pipeline's step is compiled in (its "
                "microbatches times the model's batch); recompile with "
                "another --pipeline microbatches= or model --batch");
  if (run.entries.size() > 1)
    return fail("--batch-size: this program's entries run its compiled "
                "batch (several entries: their schedule is compiled in)");
  const program::Bindings &b = run.entries[0].roles;
  std::optional<unsigned> data = b.tokens ? b.tokens : b.labels;
  const auto &args = run.entries[0].entry->arguments;
  int64_t compiled = !data || args[*data].globalShape.empty()
                         ? -1
                         : args[*data].globalShape[0];
  if (compiled <= 0)
    return fail("--batch-size: this program has no tokens or labels argument "
                "(input_ids, labels) whose first dimension is the batch");
  if (batch % compiled != 0)
    return fail("--batch-size " + llvm::Twine(batch) +
                " is not a multiple of the compiled global batch of " +
                llvm::Twine(compiled) + " sequences");
  run.microSteps = batch / compiled;
  if (run.microSteps > 1 && !(b.apply && b.gradScale))
    return fail("--batch-size " + llvm::Twine(batch) + " needs " +
                llvm::Twine(run.microSteps) + " micro-batches of the " +
                "compiled " + llvm::Twine(compiled) + " per step; compile " +
                "with tessel-compile --accumulate (gradient accumulation) " +
                "or generate the model with that batch (tessel-models " +
                "--batch)");
  return llvm::Error::success();
}

/// Carried arguments of `e` from the checkpoint `file` (of the step in
/// `where`).
llvm::Error bindCarried(const MappedSafeTensors &file, llvm::StringRef where,
                        EntryRun &e) {
  for (std::optional<unsigned> a : e.roles.feeds) {
    if (!a)
      continue;
    const TensorInfo &info = e.entry->arguments[*a];
    const SafeTensorsIndex::Entry *stored = file.index.find(info.name);
    if (!stored && info.role == Role::Accumulator)
      continue; // a running gradient sum starts at zero
    if (!stored)
      return fail(where + ": tensor '" + info.name +
                  "' is missing; this program needs it to resume (was the " +
                  "checkpoint written with another model or optimizer?)");
    if (llvm::Error err = checkStored(file.pathOf(*stored), *stored, info))
      return err;
    e.sources[*a].mapped = file.bytesOf(*stored);
  }
  return llvm::Error::success();
}

/// --resume: carried arguments from the latest checkpoint.
llvm::Error bindCheckpoint(Run &run) {
  const Options &o = run.options;
  if (!o.resume)
    return llvm::Error::success();
  if (o.ckptDir.empty())
    return fail("--resume needs --ckpt DIR");
  llvm::Expected<Checkpoint> c = readLatestCheckpoint(o.ckptDir);
  if (!c)
    return c.takeError();
  std::string where = c->dir;
  run.files.push_back(std::make_unique<MappedSafeTensors>(std::move(c->file)));
  for (EntryRun &e : run.entries)
    if (llvm::Error err = bindCarried(*run.files.back(), where, e))
      return err;
  run.firstStep = c->step;
  if (run.firstStep >= o.steps)
    return fail(where + " is after step " + llvm::Twine(run.firstStep) +
                "; give --steps above it (--steps counts all steps, resumed " +
                "ones included)");
  llvm::outs() << "resuming from " << where << " at step " << run.firstStep
               << "\n";
  return llvm::Error::success();
}

/// Opens the token file `path` for the tokens and labels of `entries` and
/// reads batch `first` now, so a file that is too short or holds tokens
/// outside the vocabulary fails before the ranks start.
llvm::Expected<TokenFile> openTokens(const Run &run, const std::string &path,
                                     const std::vector<EntryRun> &entries,
                                     int64_t first) {
  llvm::Expected<TokenFile> file =
      TokenFile::open(path, run.options.tokenType == "uint16" ? 2 : 4);
  if (!file)
    return file.takeError();
  for (const EntryRun &e : entries) {
    const program::Bindings &b = e.roles;
    const auto &args = e.entry->arguments;
    std::optional<HostTensor> ids, labels;
    if (b.tokens)
      ids = HostTensor(args[*b.tokens].dtype, args[*b.tokens].globalShape);
    if (b.labels)
      labels = HostTensor(args[*b.labels].dtype, args[*b.labels].globalShape);
    if (llvm::Error err = file->batch(first, ids ? &*ids : nullptr,
                                      labels ? &*labels : nullptr, run.vocab))
      return std::move(err);
  }
  return file;
}

/// Whether any of `entries` takes tokens or labels.
bool takesTokens(const std::vector<EntryRun> &entries) {
  return llvm::any_of(entries, [](const EntryRun &e) {
    return e.roles.tokens || e.roles.labels;
  });
}

/// --data: the token file that fills the tokens and labels arguments (of
/// whichever entries have them: a pipeline's first stage takes the tokens,
/// its last the labels); --eval-data: held-out batches for the evaluations.
llvm::Error bindData(Run &run) {
  for (const EntryRun &e : run.entries)
    if (e.roles.tokens)
      run.tokensPerStep =
          numElements(e.entry->arguments[*e.roles.tokens].globalShape) *
          run.microSteps;
  const Options &o = run.options;
  if (!o.evalDataFile.empty()) {
    if (!takesTokens(run.evals))
      return fail("--eval-data: the program has no evaluation with tokens or "
                  "labels (compile it with tessel-compile --eval forward)");
    llvm::Expected<TokenFile> file =
        openTokens(run, o.evalDataFile, run.evals, 0);
    if (!file)
      return file.takeError();
    run.evalTokens = std::move(*file);
  }
  if (o.dataFile.empty())
    return llvm::Error::success();
  if (!takesTokens(run.entries))
    return fail("--data: the program has no tokens or labels argument "
                "(input_ids, labels)");
  llvm::Expected<TokenFile> file =
      openTokens(run, o.dataFile, run.entries, run.firstStep);
  if (!file)
    return file.takeError();
  run.tokens = std::move(*file);
  return llvm::Error::success();
}

} // namespace

const EntryRun &Run::entryOf(int64_t rank) const {
  for (const EntryRun &e : entries)
    if (e.mesh->positionOf(rank) >= 0)
      return e;
  return entries.front(); // validateProgram: every rank runs one entry
}

const EntryRun *Run::reporter() const {
  for (const EntryRun &e : entries)
    if (e.roles.loss || e.roles.gradNorm)
      return &e;
  return nullptr;
}

llvm::Error rt::prepareRun(Run &run,
                           llvm::ArrayRef<void (*)(void **)> functions) {
  if (functions.size() != run.program.entries.size())
    return fail("this program exports " + llvm::Twine(functions.size()) +
                " entry points but describes " +
                llvm::Twine(run.program.entries.size()) +
                "; it is damaged");
  run.worldSize = run.program.worldSize();
  for (auto [k, entry] : llvm::enumerate(run.program.entries)) {
    EntryRun &e = (entry.kind == "eval"   ? run.evals
                   : entry.kind == "init" ? run.inits
                                          : run.entries)
                      .emplace_back();
    e.entry = &entry;
    e.mesh = run.program.findMesh(entry.mesh);
    e.roles = program::bindRoles(entry);
    e.function = functions[k];
  }
  for (auto *list : {&run.entries, &run.evals, &run.inits})
    for (EntryRun &e : *list)
      if (llvm::Error err = bindSources(run, e))
        return err;
  for (auto step : {checkInitFrom, bindLearningRate, bindBatchSize,
                    bindCheckpoint, bindData})
    if (llvm::Error err = step(run))
      return err;
  return llvm::Error::success();
}
