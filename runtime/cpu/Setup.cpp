//===- Setup.cpp - binding a program's arguments before the ranks start ---===//
//
// Everything that can be wrong with the flags, the files they name or the
// program description is found here, before any rank runs.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "tessel/runtime/Checkpoint.h"
#include "tessel/support/Random.h"

#include "llvm/ADT/StringMap.h"

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

/// Every argument from its initialization, or from --init-from where the
/// file has it.
llvm::Error bindSources(Run &run) {
  const Options &o = run.options;
  MappedSafeTensors *given = nullptr;
  if (!o.initFrom.empty()) {
    llvm::Expected<MappedSafeTensors> file =
        MappedSafeTensors::open(o.initFrom);
    if (!file)
      return file.takeError();
    run.files.push_back(std::make_unique<MappedSafeTensors>(std::move(*file)));
    given = run.files.back().get();
  }
  for (const TensorInfo &info : run.entry->arguments) {
    ArgumentSource &source = run.sources.emplace_back();
    if (const SafeTensorsIndex::Entry *e =
            given ? given->index.find(info.name) : nullptr) {
      if (llvm::Error err = checkStored(o.initFrom, *e, info))
        return err;
      source.mapped = given->bytesOf(*e);
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

llvm::Error bindLearningRate(Run &run) {
  double lr = run.options.lr;
  if (lr == 0)
    return llvm::Error::success();
  if (!run.roles.learningRate)
    return fail("--lr: this program has its learning rate compiled in; "
                "compile it with tessel-compile (which makes it an argument) "
                "to set it at run time");
  if (!(lr > 0))
    return fail("--lr must be positive");
  ArgumentSource &source = run.sources[*run.roles.learningRate];
  source.mapped = nullptr;
  source.spec = InitSpec{InitSpec::Constant, lr, 0.0};
  return llvm::Error::success();
}

/// --batch-size: micro-steps of the compiled batch per optimizer step.
llvm::Error bindBatchSize(Run &run) {
  int64_t batch = run.options.batchSize;
  if (batch == 0)
    return llvm::Error::success();
  const program::Bindings &b = run.roles;
  std::optional<unsigned> data = b.tokens ? b.tokens : b.labels;
  const auto &args = run.entry->arguments;
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
  run.files.push_back(std::make_unique<MappedSafeTensors>(std::move(c->file)));
  const MappedSafeTensors &file = *run.files.back();
  for (std::optional<unsigned> a : run.roles.feeds) {
    if (!a)
      continue;
    const TensorInfo &info = run.entry->arguments[*a];
    const SafeTensorsIndex::Entry *e = file.index.find(info.name);
    if (!e && info.role == Role::Accumulator)
      continue; // a running gradient sum starts at zero
    if (!e)
      return fail(file.path + ": tensor '" + info.name +
                  "' is missing; this program needs it to resume (was the " +
                  "checkpoint written with another model or optimizer?)");
    if (llvm::Error err = checkStored(file.path, *e, info))
      return err;
    run.sources[*a].mapped = file.bytesOf(*e);
  }
  run.firstStep = c->step;
  if (run.firstStep >= o.steps)
    return fail(file.path + " is after step " + llvm::Twine(run.firstStep) +
                "; give --steps above it (--steps counts all steps, resumed " +
                "ones included)");
  llvm::outs() << "resuming from " << file.path << " at step "
               << run.firstStep << "\n";
  return llvm::Error::success();
}

/// --data: the token file that fills the tokens and labels arguments.
llvm::Error bindData(Run &run) {
  const program::Bindings &b = run.roles;
  const auto &args = run.entry->arguments;
  if (b.tokens)
    run.tokensPerStep = numElements(args[*b.tokens].globalShape) *
                        run.microSteps;
  const Options &o = run.options;
  if (o.dataFile.empty())
    return llvm::Error::success();
  if (!b.tokens && !b.labels)
    return fail("--data: the program has no tokens or labels argument "
                "(input_ids, labels)");
  llvm::Expected<TokenFile> file =
      TokenFile::open(o.dataFile, o.tokenType == "uint16" ? 2 : 4);
  if (!file)
    return file.takeError();
  run.tokens = std::move(*file);
  // The first batch now, so a file that is too short or holds tokens
  // outside the vocabulary fails before the ranks start.
  std::optional<HostTensor> ids, labels;
  if (b.tokens)
    ids = HostTensor(args[*b.tokens].dtype, args[*b.tokens].globalShape);
  if (b.labels)
    labels = HostTensor(args[*b.labels].dtype, args[*b.labels].globalShape);
  return run.tokens->batch(run.firstStep, ids ? &*ids : nullptr,
                           labels ? &*labels : nullptr, run.vocab);
}

} // namespace

int64_t Run::positionOf(int64_t rank) const {
  const std::vector<int64_t> &devices = mesh->devices;
  for (auto [position, r] : llvm::enumerate(devices))
    if (r == rank)
      return position;
  return rank; // no device list: the identity
}

llvm::Error rt::prepareRun(Run &run) {
  if (run.program.entries.size() != 1)
    return fail("this program has " +
                llvm::Twine(run.program.entries.size()) +
                " entry points; this runtime runs programs of one");
  run.entry = &run.program.entries.front();
  run.mesh = run.program.findMesh(run.entry->mesh);
  run.roles = program::bindRoles(*run.entry);
  for (auto step : {bindSources, bindLearningRate, bindBatchSize,
                    bindCheckpoint, bindData})
    if (llvm::Error err = step(run))
      return err;
  return llvm::Error::success();
}
