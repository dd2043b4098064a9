//===- tessel-interp.cpp - run tessel programs on host tensors ------------===//
//
// tessel-interp FILE.mlir [--func NAME] [--seed S] [--inputs IN.safetensors]
//               [--save OUT.safetensors] [--print]
//
// Inputs and outputs are global tensors. A `tessel.spmd` function runs as one
// thread per device of its mesh; its inputs are sliced by their shardings and
// its outputs reassembled, so the same seed or inputs feed the unpartitioned
// and the partitioned program identical values.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/interpreter/Inputs.h"
#include "tessel/interpreter/Interpreter.h"
#include "tessel/support/CustomCalls.h"
#include "tessel/program/Describe.h"
#include "tessel/support/Random.h"
#include "tessel/support/TokenFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::tessel;
using namespace ::tessel;
namespace ti = ::tessel::interp;
namespace tp = ::tessel::program;

static llvm::cl::OptionCategory toolCategory("tessel-interp options");

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<program.mlir>"),
                                            llvm::cl::init("-"),
                                            llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    funcName("func",
             llvm::cl::desc("Function to run (default: @forward, "
                            "else the only function with a body); several, "
                            "comma-separated: tessel.spmd functions run "
                            "together, each on the ranks of its mesh (the "
                            "stages of a pipeline)"),
             llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> customCallLibraries(
    "custom-calls",
    llvm::cl::desc("Shared libraries of custom-call kernels "
                   "(comma-separated; tessel/runtime/CustomCall.h)"),
    llvm::cl::value_desc("lib.so,..."), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> saveInputsFile(
    "save-inputs",
    llvm::cl::desc("Also write the function's inputs (given, initialized "
                   "from the seed, or read from --tokens) to this "
                   "safetensors file, by argument name"),
    llvm::cl::value_desc("file"));
static llvm::cl::opt<uint64_t> seed("seed",
                                    llvm::cl::desc("Seed for inputs not given"),
                                    llvm::cl::init(0),
                                    llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    inputsFile("inputs",
               llvm::cl::desc("safetensors file of inputs, by "
                              "argument name (tessel.name or argN)"),
               llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    saveFile("save",
             llvm::cl::desc("Write the outputs to this safetensors "
                            "file (by tessel.name or resultN)"),
             llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> expectFile(
    "expect",
    llvm::cl::desc("Compare the outputs with this safetensors file "
                   "(by name); exit 1 on a mismatch"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<double>
    relTol("rtol", llvm::cl::desc("Relative tolerance for --expect"),
           llvm::cl::init(1e-5), llvm::cl::cat(toolCategory));
static llvm::cl::opt<double>
    absTol("atol", llvm::cl::desc("Absolute tolerance for --expect"),
           llvm::cl::init(1e-6), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> tokensFile(
    "tokens",
    llvm::cl::desc("Take the tokens and labels arguments (input_ids and "
                   "labels: integer [batch, sequence]) from this flat token "
                   "file (nanoGPT's .bin): with --train-steps a new window "
                   "per step"),
    llvm::cl::value_desc("file"), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> tokenType(
    "token-type", llvm::cl::desc("uint16 (default) or uint32"),
    llvm::cl::init("uint16"), llvm::cl::cat(toolCategory));
static llvm::cl::opt<unsigned> trainSteps(
    "train-steps",
    llvm::cl::desc("Run the function N times as a training step: each "
                   "carried result (new parameters, optimizer state; see "
                   "tessel.runtime_role) feeds its argument of the next "
                   "call, the step argument gets 0, 1, ...; the batch comes "
                   "from --tokens or "
                   "stays fixed. Prints loss and grad_norm per step; --save, "
                   "--print and --expect see the last step's outputs"),
    llvm::cl::init(0), llvm::cl::cat(toolCategory));

static llvm::cl::opt<bool>
    printOutputs("print",
                 llvm::cl::desc("Print each output's shape, first "
                                "values and checksums"),
                 llvm::cl::cat(toolCategory));

static int failWith(const Twine &message) {
  llvm::errs() << "tessel-interp: " << message << "\n";
  return 1;
}

static func::FuncOp chooseFunction(ModuleOp module) {
  if (!funcName.empty())
    return module.lookupSymbol<func::FuncOp>(funcName);
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    return forward;
  func::FuncOp only;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    if (only)
      return {};
    only = f;
  }
  return only;
}

static void print(llvm::StringRef name, const HostTensor &t) {
  llvm::outs() << name << ": " << t.typeString() << " =";
  int64_t n = t.size(), shown = std::min<int64_t>(n, 8);
  if (t.rank() > 0)
    llvm::outs() << " [";
  for (int64_t k = 0; k < shown; ++k) {
    llvm::outs() << (k ? ", " : (t.rank() ? "" : " "));
    if (t.isFloat())
      llvm::outs() << llvm::format("%.7g", t.f[k]);
    else
      llvm::outs() << t.i[k];
  }
  if (t.rank() > 0)
    llvm::outs() << (n > shown ? ", ...]" : "]");
  double sum = 0, absSum = 0;
  for (int64_t k = 0; k < n; ++k) {
    sum += t.getF(k);
    absSum += std::fabs(t.getF(k));
  }
  llvm::outs() << llvm::format("  sum=%.9g abs_sum=%.9g\n", sum, absSum);
}

/// Compares `outputs` with the tensors of `path`: |a - b| <= atol + rtol*|b|
/// elementwise (NaNs must match). Prints one line per output.
static int compareWith(const NamedTensors &outputs, llvm::StringRef path) {
  llvm::Expected<NamedTensors> expected = readSafeTensors(path);
  if (!expected)
    return failWith(llvm::toString(expected.takeError()));
  bool ok = true;
  for (const auto &[name, got] : outputs.tensors) {
    const HostTensor *want = expected->find(name);
    if (!want) {
      llvm::outs() << "MISMATCH " << name << ": not in " << path << "\n";
      ok = false;
      continue;
    }
    if (want->shape != got.shape || want->dtype != got.dtype) {
      llvm::outs() << "MISMATCH " << name << ": " << got.typeString() << " vs "
                   << want->typeString() << " in " << path << "\n";
      ok = false;
      continue;
    }
    double maxAbs = 0, maxRel = 0;
    int64_t bad = 0;
    for (int64_t k = 0; k < got.size(); ++k) {
      double a = got.getF(k), b = want->getF(k);
      if (std::isnan(a) || std::isnan(b)) {
        bad += std::isnan(a) != std::isnan(b);
        continue;
      }
      if (a == b)
        continue; // also equal infinities
      double diff = std::fabs(a - b);
      maxAbs = std::max(maxAbs, diff);
      if (b != 0)
        maxRel = std::max(maxRel, diff / std::fabs(b));
      bad += !(diff <= absTol + relTol * std::fabs(b));
    }
    llvm::outs() << (bad ? "MISMATCH " : "match ") << name
                 << llvm::format(": max abs err %.3g, max rel err %.3g", maxAbs,
                                 maxRel);
    if (bad)
      llvm::outs() << ", " << bad << " of " << got.size()
                   << " elements outside tolerance";
    llvm::outs() << "\n";
    ok &= bad == 0;
  }
  return ok ? 0 : 1;
}

/// --func a,b: SPMD functions run together (ti::runMpmd); their outputs by
/// result name, which must be unique across them.
static llvm::Expected<NamedTensors>
runTogether(ModuleOp module, const std::optional<NamedTensors> &given) {
  auto fail = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   message.str());
  };
  if (trainSteps || !tokensFile.empty())
    return fail("--train-steps and --tokens run one function, not " +
                funcName);
  SmallVector<StringRef> names;
  StringRef(funcName).split(names, ',', -1, false);
  SmallVector<func::FuncOp> funcs;
  std::vector<std::vector<HostTensor>> args;
  for (StringRef name : names) {
    auto func = module.lookupSymbol<func::FuncOp>(name.trim());
    if (!func)
      return fail("no function @" + name.trim() + " in " + inputFile);
    if (failed(tp::spmdMesh(func)))
      return fail("@" + name.trim() + " is not a tessel.spmd function; "
                  "functions run together must each run on a mesh");
    llvm::Expected<std::vector<HostTensor>> inputs =
        ti::makeInputs(func, seed, given ? &*given : nullptr, inputsFile);
    if (!inputs)
      return inputs.takeError();
    funcs.push_back(func);
    args.push_back(std::move(*inputs));
  }
  auto outputs = ti::runMpmd(funcs, args);
  if (!outputs)
    return outputs.takeError();
  NamedTensors named;
  std::map<std::string, std::string> owner;
  for (auto [k, func] : llvm::enumerate(funcs))
    for (auto [r, t] : llvm::enumerate((*outputs)[k])) {
      std::string name = tp::resultName(func, r);
      auto [it, fresh] = owner.emplace(name, func.getSymName().str());
      if (!fresh) {
        // A parameter two pipeline stages hold (a tied embedding): equal
        // copies of one carried tensor, kept once.
        const HostTensor *first = named.find(name);
        if (tp::isCarried(tp::resultRole(func, r)) && first &&
            first->shape == t.shape && first->dtype == t.dtype)
          continue;
        return fail("@" + it->second + " and @" + func.getSymName() +
                    " both return '" + name + "'; give results run "
                    "together distinct tessel.name");
      }
      named.tensors.emplace_back(name, std::move(t));
    }
  return named;
}

/// Prints, saves and compares the outputs as the options say.
static int finish(NamedTensors outputs) {
  if (printOutputs)
    for (const auto &[name, t] : outputs.tensors)
      print(name, t);
  if (!saveFile.empty())
    if (llvm::Error err = writeSafeTensors(saveFile, outputs))
      return failWith(llvm::toString(std::move(err)));
  if (!expectFile.empty())
    return compareWith(outputs, expectFile);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(toolCategory);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Tessel reference interpreter\n\n"
      "Runs a function of tessel ops on host tensors; a "
      "tessel.spmd function runs as one thread per device.\n");
  if (llvm::Error e =
          ::tessel::customcalls::loadLibraries(customCallLibraries)) {
    llvm::errs() << "tessel-interp: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  }

  DialectRegistry registry;
  registry.insert<mlir::tessel::TesselDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return failWith(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser reported the error with its location.

  std::optional<NamedTensors> given;
  if (!inputsFile.empty()) {
    llvm::Expected<NamedTensors> read = readSafeTensors(inputsFile);
    if (!read)
      return failWith(llvm::toString(read.takeError()));
    given = std::move(*read);
  }
  if (StringRef(funcName).contains(',')) {
    llvm::Expected<NamedTensors> outputs = runTogether(*module, given);
    if (!outputs)
      return failWith(llvm::toString(outputs.takeError()));
    return finish(std::move(*outputs));
  }

  func::FuncOp func = chooseFunction(*module);
  if (!func)
    return failWith(funcName.empty()
                        ? "no @forward and no single function to run; pass "
                          "--func NAME"
                        : "no function @" + funcName + " in " + inputFile);

  llvm::Expected<std::vector<HostTensor>> inputs =
      ti::makeInputs(func, seed, given ? &*given : nullptr, inputsFile);
  if (!inputs)
    return failWith(llvm::toString(inputs.takeError()));

  // Token batches: input_ids and labels from --tokens, batch k for step k.
  std::optional<TokenFile> tokens;
  std::optional<unsigned> idsArg, labelsArg;
  int64_t vocab = 0;
  if (!tokensFile.empty()) {
    if (tokenType != "uint16" && tokenType != "uint32")
      return failWith("--token-type must be uint16 or uint32");
    llvm::Expected<TokenFile> file =
        TokenFile::open(tokensFile, tokenType == "uint16" ? 2 : 4);
    if (!file)
      return failWith(llvm::toString(file.takeError()));
    tokens = std::move(*file);
    for (unsigned a = 0; a < func.getNumArguments(); ++a) {
      tp::Role role = tp::argumentRole(func, a);
      if (role != tp::Role::Tokens && role != tp::Role::Labels)
        continue;
      (role == tp::Role::Labels ? labelsArg : idsArg) = a;
      // The vocabulary, from the ids' int:0:V initialization.
      if (llvm::Expected<InitSpec> spec = tp::initSpecFor(func, a)) {
        if (spec->kind == InitSpec::IntRange)
          vocab = vocab ? std::min<int64_t>(vocab, spec->b) : spec->b;
      } else {
        llvm::consumeError(spec.takeError());
      }
    }
    if (!idsArg && !labelsArg)
      return failWith("--tokens: @" + func.getSymName().str() +
                      " has no tokens or labels argument (input_ids, labels) to fill");
  }
  auto loadBatch = [&](uint64_t k) -> llvm::Error {
    if (!tokens)
      return llvm::Error::success();
    return tokens->batch(k, idsArg ? &(*inputs)[*idsArg] : nullptr,
                         labelsArg ? &(*inputs)[*labelsArg] : nullptr, vocab);
  };

  if (!saveInputsFile.empty()) {
    if (llvm::Error err = loadBatch(0))
      return failWith(llvm::toString(std::move(err)));
    NamedTensors named;
    for (auto [a, t] : llvm::enumerate(*inputs))
      named.tensors.emplace_back(tp::argName(func, a), t);
    if (llvm::Error err = writeSafeTensors(saveInputsFile, named))
      return failWith(llvm::toString(std::move(err)));
  }
  bool spmd = succeeded(tp::spmdMesh(func));
  auto runOnce = [&](std::vector<HostTensor> args) {
    return spmd ? ti::runSpmd(func, args) : ti::runFunction(func, std::move(args));
  };
  llvm::Expected<std::vector<HostTensor>> outputs = std::vector<HostTensor>();
  if (trainSteps == 0) {
    if (llvm::Error err = loadBatch(0))
      return failWith(llvm::toString(std::move(err)));
    outputs = runOnce(std::move(*inputs));
  } else {
    // Carried results feed the argument of the same role and name.
    std::map<std::pair<tp::Role, std::string>, unsigned> carried;
    std::optional<unsigned> stepArg, seedArg;
    for (unsigned a = 0; a < func.getNumArguments(); ++a) {
      tp::Role role = tp::argumentRole(func, a);
      if (tp::isCarried(role))
        carried[{role, tp::argName(func, a)}] = a;
      if (role == tp::Role::Step)
        stepArg = a;
      if (role == tp::Role::Seed)
        seedArg = a;
    }
    SmallVector<std::pair<unsigned, unsigned>> feedback; // result -> arg
    std::optional<unsigned> lossResult, normResult;
    for (unsigned r = 0; r < func.getNumResults(); ++r) {
      tp::Role role = tp::resultRole(func, r);
      if (role == tp::Role::Loss)
        lossResult = r;
      else if (role == tp::Role::GradNorm)
        normResult = r;
      auto it = carried.find({role, tp::resultName(func, r)});
      if (it != carried.end())
        feedback.push_back({r, it->second});
    }
    if (feedback.empty())
      return failWith("--train-steps: no result of @" +
                      func.getSymName().str() +
                      " feeds an argument (a parameter, optimizer state or "
                      "a result named like an argument), so nothing would "
                      "be trained; run a function built by "
                      "--tessel-train-step");
    for (unsigned k = 0; k < trainSteps; ++k) {
      if (stepArg) {
        HostTensor &t = (*inputs)[*stepArg];
        for (int64_t e = 0; e < t.size(); ++e)
          t.setI(e, k);
      }
      if (seedArg) { // as the compiled program's runtime sets it
        HostTensor &t = (*inputs)[*seedArg];
        for (int64_t e = 0; e < t.size(); ++e)
          t.setI(e, int64_t(callSeed(seed, k * t.size() + e)));
      }
      if (llvm::Error err = loadBatch(k))
        return failWith(llvm::toString(std::move(err)));
      outputs = runOnce(*inputs);
      if (!outputs)
        break;
      llvm::outs() << "step " << k;
      if (lossResult)
        llvm::outs() << llvm::format(": loss %.6f",
                                     (*outputs)[*lossResult].getF(0));
      if (normResult)
        llvm::outs() << llvm::format(", grad_norm %.6f",
                                     (*outputs)[*normResult].getF(0));
      llvm::outs() << "\n";
      for (auto [r, a] : feedback) {
        // Global tensors: a partitioned program may shard a new parameter
        // differently from the old one, but its global type is the same.
        HostTensor &out = (*outputs)[r];
        if (out.dtype != (*inputs)[a].dtype || out.shape != (*inputs)[a].shape)
          return failWith("--train-steps: result '" + tp::resultName(func, r) +
                          "' is " + out.typeString() + " but the argument " +
                          "it feeds is " + (*inputs)[a].typeString());
        (*inputs)[a] = out;
      }
    }
  }
  if (!outputs)
    return failWith(llvm::toString(outputs.takeError()));

  NamedTensors saved;
  for (auto [r, t] : llvm::enumerate(*outputs))
    saved.tensors.emplace_back(tp::resultName(func, r), std::move(t));
  return finish(std::move(saved));
}
