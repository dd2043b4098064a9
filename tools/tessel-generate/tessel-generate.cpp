//===- tessel-generate.cpp - sample text from a trained model -------------===//
//
//   tessel-generate MODEL.mlir --weights CKPT --prompt "In the beginning"
//       [--tokens 200] [--temperature 0.8] [--top-k 40] [--seed 0]
//
// Runs the model's logits (--tessel-logits of its forward, without dropout,
// on one device, in the reference interpreter) on the weights of a
// checkpoint and samples one token at a time, as nanoGPT's sample.py does:
// every row of the model's batch is one sample; its last `seq` tokens are
// the window, and the next token is drawn from the logits at the window's
// last position (softmax of logits / temperature over the top-k; greedy at
// temperature 0). Tokens are bytes (tessel-tokenize's vocabulary) when the
// vocabulary has at most 256 entries.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/interpreter/Inputs.h"
#include "tessel/interpreter/Interpreter.h"
#include "tessel/passes/Passes.h"
#include "tessel/program/Describe.h"
#include "tessel/support/Random.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace ::tessel;
namespace cl = llvm::cl;
namespace tp = ::tessel::program;

static cl::OptionCategory category("tessel-generate options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    weights("weights",
            cl::desc("The trained weights: a checkpoint directory (its "
                     "latest step), one step's directory, or a safetensors "
                     "file (--save)"),
            cl::cat(category));
static cl::opt<std::string> funcName("func",
                                     cl::desc("The forward (default forward)"),
                                     cl::init("forward"), cl::cat(category));
static cl::opt<std::string> prompt("prompt",
                                   cl::desc("Text to continue (one token per "
                                            "byte)"),
                                   cl::cat(category));
static cl::opt<std::string>
    promptTokens("prompt-tokens",
                 cl::desc("The prompt as token ids, comma-separated"),
                 cl::cat(category));
static cl::opt<int64_t> numTokens("tokens", cl::desc("Tokens to generate"),
                                  cl::init(100), cl::cat(category));
static cl::opt<int64_t>
    numSamples("samples",
               cl::desc("Samples to draw (at most the model's batch; "
                        "default 1)"),
               cl::init(1), cl::cat(category));
static cl::opt<double>
    temperature("temperature",
                cl::desc("Divides the logits (0: always the likeliest "
                         "token; default 0.8)"),
                cl::init(0.8), cl::cat(category));
static cl::opt<int64_t> topK("top-k",
                             cl::desc("Draw among the K likeliest tokens "
                                      "(0: all; default 40)"),
                             cl::init(40), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the draws"),
                              cl::init(0), cl::cat(category));
static cl::opt<bool> printIds("print-tokens",
                              cl::desc("Print token ids, not text"),
                              cl::cat(category));

static int failWith(const llvm::Twine &message) {
  llvm::errs() << "tessel-generate: " << message << "\n";
  return 1;
}

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

/// The tensors `path` names: a safetensors file, or a checkpoint step's
/// shards (those its index names, or its model.safetensors), the step
/// being `path` or the one a checkpoint directory's `latest` names.
static llvm::Expected<NamedTensors> loadWeights(llvm::StringRef path) {
  llvm::SmallString<256> dir(path), latest(path);
  llvm::sys::path::append(latest, "latest");
  if (auto buffer = llvm::MemoryBuffer::getFile(latest))
    llvm::sys::path::append(dir, (*buffer)->getBuffer().trim());
  llvm::Expected<MappedSafeTensors> file = MappedSafeTensors::openAny(dir);
  if (!file)
    return file.takeError();
  return file->decodeAll();
}

/// The prompt's tokens, each below `vocab`.
static llvm::Expected<std::vector<int64_t>> promptIds(int64_t vocab) {
  std::vector<int64_t> ids;
  if (!promptTokens.empty()) {
    for (llvm::StringRef part : llvm::split(promptTokens, ',')) {
      int64_t id;
      if (part.trim().getAsInteger(10, id) || id < 0 || id >= vocab)
        return fail("--prompt-tokens: '" + part.trim() +
                    "' is not a token id in [0, " + llvm::Twine(vocab) + ")");
      ids.push_back(id);
    }
  } else {
    if (vocab < 256)
      return fail("--prompt: text is one token per byte, which needs a "
                  "vocabulary of 256; this model's is " + llvm::Twine(vocab) +
                  " (give --prompt-tokens)");
    for (unsigned char c : prompt)
      ids.push_back(c);
  }
  if (ids.empty())
    return fail("give a prompt (--prompt TEXT or --prompt-tokens 1,2,3)");
  return ids;
}

/// The next token from `logits` (one position's, `vocab` of them): greedy at
/// temperature 0, else drawn from the softmax of logits / temperature over
/// the top-k, with `u` uniform in [0, 1).
static int64_t pick(const double *logits, int64_t vocab, double u) {
  std::vector<int64_t> order(vocab);
  for (int64_t v = 0; v < vocab; ++v)
    order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return logits[a] > logits[b];
  });
  if (temperature == 0)
    return order.front();
  int64_t k = topK > 0 ? std::min<int64_t>(topK, vocab) : vocab;
  std::vector<double> p(k);
  double top = logits[order.front()], sum = 0;
  for (int64_t j = 0; j < k; ++j)
    sum += p[j] = std::exp((logits[order[j]] - top) / temperature);
  double target = u * sum;
  for (int64_t j = 0; j < k; ++j) {
    target -= p[j];
    if (target < 0)
      return order[j];
  }
  return order[k - 1];
}

namespace {
/// The logits function and where its tokens and weights go.
struct Sampler {
  func::FuncOp func;
  std::vector<HostTensor> inputs;
  unsigned tokensArg = 0;
  int64_t batch = 0, seq = 0, vocab = 0;

  llvm::Error bind(func::FuncOp f, const NamedTensors &given,
                   llvm::StringRef file);
  /// One call: each row's window in, its next token out.
  llvm::Expected<std::vector<int64_t>>
  next(const std::vector<std::vector<int64_t>> &rows, uint64_t draw);
};
} // namespace

llvm::Error Sampler::bind(func::FuncOp f, const NamedTensors &given,
                          llvm::StringRef file) {
  func = f;
  std::optional<unsigned> tokens;
  std::vector<std::string> missing;
  // The weights the function reads (a checkpoint also holds optimizer
  // state).
  NamedTensors used;
  for (unsigned a = 0; a < f.getNumArguments(); ++a) {
    tp::Role role = tp::argumentRole(f, a);
    if (role == tp::Role::Tokens)
      tokens = a;
    auto type = cast<RankedTensorType>(f.getArgumentTypes()[a]);
    if (role != tp::Role::Input || !isa<FloatType>(type.getElementType()))
      continue;
    if (const HostTensor *t = given.find(tp::argName(f, a)))
      used.tensors.emplace_back(tp::argName(f, a), *t);
    else
      missing.push_back(tp::argName(f, a));
  }
  if (!missing.empty())
    return fail(file + " has no tensor '" + missing.front() + "' (and " +
                llvm::Twine(missing.size() - 1) +
                " more parameters of the model are missing)");
  auto logits = dyn_cast<RankedTensorType>(f.getResultTypes()[0]);
  if (!tokens || !logits || logits.getRank() != 3)
    return fail("@" + funcName + " must take input_ids [batch, seq] and "
                "compute logits [batch, seq, vocab]");
  tokensArg = *tokens;
  batch = logits.getDimSize(0);
  seq = logits.getDimSize(1);
  vocab = logits.getDimSize(2);
  llvm::Expected<std::vector<HostTensor>> made =
      interp::makeInputs(f, seed, &used, file);
  if (!made)
    return made.takeError();
  inputs = std::move(*made);
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>>
Sampler::next(const std::vector<std::vector<int64_t>> &rows, uint64_t draw) {
  HostTensor &ids = inputs[tokensArg];
  std::vector<int64_t> last(rows.size());
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int64_t> &row = rows[std::min<size_t>(b, rows.size() - 1)];
    int64_t w = std::min<int64_t>(row.size(), seq);
    for (int64_t s = 0; s < seq; ++s)
      ids.setI(b * seq + s, s < w ? row[row.size() - w + s] : 0);
    if (b < int64_t(rows.size()))
      last[b] = w - 1;
  }
  llvm::Expected<std::vector<HostTensor>> out =
      interp::runFunction(func, inputs);
  if (!out)
    return out.takeError();
  const HostTensor &logits = out->front();
  std::vector<int64_t> picked;
  for (size_t b = 0; b < rows.size(); ++b) {
    double u = uniform01(seed, streamOf("sample"), draw * batch + b);
    picked.push_back(
        pick(&logits.f[(b * seq + last[b]) * vocab], vocab, u));
  }
  return picked;
}

static void printSample(const std::vector<int64_t> &row, int64_t vocab) {
  if (printIds || vocab > 256) {
    for (auto [k, id] : llvm::enumerate(row))
      llvm::outs() << (k ? " " : "") << id;
    llvm::outs() << "\n";
    return;
  }
  for (int64_t id : row)
    llvm::outs() << char(id);
  llvm::outs() << "\n";
}

static int generate(ModuleOp module) {
  PassManager pm(module.getContext());
  std::string pipeline = "tessel-strip-shardings,tessel-inference-mode{"
                         "functions=" +
                         funcName + "},tessel-logits{func=" + funcName + "}";
  if (failed(parsePassPipeline(pipeline, pm)) || failed(pm.run(module)))
    return 1;
  auto f = module.lookupSymbol<func::FuncOp>(funcName + "_logits");
  llvm::Expected<NamedTensors> given = loadWeights(weights);
  if (!given)
    return failWith(llvm::toString(given.takeError()));
  Sampler s;
  if (llvm::Error err = s.bind(f, *given, weights))
    return failWith(llvm::toString(std::move(err)));
  if (numSamples < 1 || numSamples > s.batch)
    return failWith("--samples " + llvm::Twine(numSamples) +
                    " must be in [1, " + llvm::Twine(s.batch) +
                    "] (the model's batch)");
  llvm::Expected<std::vector<int64_t>> start = promptIds(s.vocab);
  if (!start)
    return failWith(llvm::toString(start.takeError()));
  std::vector<std::vector<int64_t>> rows(numSamples, *start);
  for (int64_t t = 0; t < numTokens; ++t) {
    llvm::Expected<std::vector<int64_t>> next = s.next(rows, t);
    if (!next)
      return failWith(llvm::toString(next.takeError()));
    for (auto [row, id] : llvm::zip(rows, *next))
      row.push_back(id);
  }
  for (auto [k, row] : llvm::enumerate(rows)) {
    if (numSamples > 1)
      llvm::outs() << "--- sample " << k << "\n";
    printSample(row, s.vocab);
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Samples text from a trained tessel model\n");
  if (weights.empty())
    return failWith("give the trained weights with --weights CKPT");
  if (numTokens < 0)
    return failWith("--tokens must be 0 or more");
  if (!(temperature >= 0))
    return failWith("--temperature must be 0 or more");
  if (topK < 0)
    return failWith("--top-k must be 0 or more");
  DialectRegistry registry;
  registry.insert<mlir::tessel::TesselDialect, func::FuncDialect>();
  mlir::tessel::registerTesselPasses();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return 1;
  return generate(*module);
}
