//===- tessel-models.cpp - emit reference models as tessel MLIR -----------===//
//
// tessel-models mlp|gpt|llama [--layers N --hidden H --heads A --kv-heads K
//   --ffn F --vocab V --seq S --batch B --dtype f32] [--mesh "dp=2,tp=4"
//   [--strategy dp|fsdp|tp|... | --rules FILE]] [-o FILE]
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/models/Models.h"
#include "tessel/sharding/LogicalRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tessel;

namespace cl = llvm::cl;
static llvm::cl::OptionCategory toolCategory("tessel-models options");

static cl::opt<std::string> kind(cl::Positional,
                                 cl::desc("<mlp|gpt|llama|moe>"),
                                 llvm::cl::cat(toolCategory));
static cl::opt<int64_t> layers("layers", cl::desc("Layers"), cl::init(2),
                               llvm::cl::cat(toolCategory));
static cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size"), cl::init(128),
                               llvm::cl::cat(toolCategory));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads"), cl::init(4),
                              llvm::cl::cat(toolCategory));
static cl::opt<int64_t> kvHeads("kv-heads",
                                cl::desc("Key/value heads (llama; default: "
                                         "--heads)"),
                                cl::init(0), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> ffn("ffn",
                            cl::desc("FFN width (default: 4*hidden, "
                                     "llama: ~8/3*hidden)"),
                            cl::init(0), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary (mlp: classes)"),
                              cl::init(256), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> seq("seq", cl::desc("Sequence length"), cl::init(64),
                            llvm::cl::cat(toolCategory));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(4),
                              llvm::cl::cat(toolCategory));
static cl::opt<std::string> dtype("dtype", cl::desc("f32 | bf16 | f16 | f64"),
                                  cl::init("f32"), llvm::cl::cat(toolCategory));
static cl::opt<std::string>
    tied("tied",
         cl::desc("Tie the LM head to the embedding: yes | no "
                  "(default: yes for gpt, no for llama)"),
         llvm::cl::cat(toolCategory));
static cl::opt<std::string> lossKind("loss", cl::desc("mlp loss: ce | mse"),
                                     cl::init("ce"),
                                     llvm::cl::cat(toolCategory));
static cl::opt<std::string> widths("widths",
                                   cl::desc("mlp layer widths, e.g. 16,32,10"),
                                   llvm::cl::cat(toolCategory));
static cl::opt<double>
    dropout("dropout",
            cl::desc("Dropout probability of the embeddings, attention "
                     "probabilities and residual branches (mlp: hidden "
                     "activations), as GPT-2's 0.1; evaluations "
                     "(tessel-compile --eval) run without it (default 0)"),
            cl::init(0.0), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> experts("experts", cl::desc("moe: experts per layer"),
                                cl::init(8), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> topK("top-k",
                             cl::desc("moe: experts per token (1: Switch, "
                                      "2: Mixtral)"),
                             cl::init(2), llvm::cl::cat(toolCategory));
static cl::opt<double>
    capacityFactor("capacity-factor",
                   cl::desc("moe: expert capacity = ceil(seq * top-k / "
                            "experts * factor) tokens per sequence"),
                   cl::init(1.25), llvm::cl::cat(toolCategory));
static cl::opt<double> auxLoss("aux-loss",
                               cl::desc("moe: load-balancing loss "
                                        "coefficient"),
                               cl::init(0.01), llvm::cl::cat(toolCategory));
static cl::opt<double> zLoss("z-loss",
                             cl::desc("moe: router z-loss coefficient"),
                             cl::init(0.001), llvm::cl::cat(toolCategory));
static cl::opt<int64_t> moeEvery("moe-every",
                                 cl::desc("moe: every N-th layer is MoE, "
                                          "the others dense"),
                                 cl::init(1), llvm::cl::cat(toolCategory));
static cl::opt<std::string>
    meshSpec("mesh", cl::desc("Device mesh, e.g. \"dp=2,tp=4\""),
             llvm::cl::cat(toolCategory));
static cl::opt<std::string>
    strategy("strategy", cl::desc("Built-in sharding rules (needs --mesh)"),
             llvm::cl::cat(toolCategory));
static cl::opt<std::string>
    rulesFile("rules", cl::desc("Logical-axis rules JSON (needs --mesh)"),
              llvm::cl::cat(toolCategory));
static cl::opt<std::string>
    printStrategy("print-strategy",
                  cl::desc("Print a built-in strategy's rules and exit"),
                  llvm::cl::cat(toolCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::init("-"),
                                       llvm::cl::cat(toolCategory));

static int failWith(const Twine &message) {
  llvm::errs() << "tessel-models: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "Emits reference models in the tessel dialect\n");
  if (!printStrategy.empty()) {
    StringRef text = builtinStrategyText(printStrategy);
    if (text.empty())
      return failWith(
          llvm::toString(builtinStrategy(printStrategy).takeError()));
    llvm::outs() << text;
    return 0;
  }
  if (kind.empty())
    return failWith("name a model: mlp, gpt or llama (see --help)");

  models::ModelConfig config;
  config.kind = kind;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.kvHeads = kvHeads;
  config.ffn = ffn;
  config.vocab = vocab;
  config.seq = seq;
  config.batch = batch;
  config.dtype = dtype;
  config.loss = lossKind;
  config.dropout = dropout;
  config.tiedEmbeddings =
      tied.empty() ? kind != "llama" && kind != "moe" : tied == "yes";
  config.experts = experts;
  config.topK = topK;
  config.capacityFactor = capacityFactor;
  config.auxLoss = auxLoss;
  config.zLoss = zLoss;
  config.moeEvery = moeEvery;
  if (!tied.empty() && tied != "yes" && tied != "no")
    return failWith("--tied must be yes or no");
  for (StringRef w : llvm::split(widths.getValue(), ',')) {
    int64_t n;
    if (w.empty())
      continue;
    if (w.trim().getAsInteger(10, n) || n < 1)
      return failWith("--widths expects positive integers like 16,32,10");
    config.widths.push_back(n);
  }

  MLIRContext context;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      models::buildModel(&context, config);
  if (!module)
    return failWith(llvm::toString(module.takeError()));

  if (!strategy.empty() || !rulesFile.empty()) {
    if (meshSpec.empty())
      return failWith("--strategy and --rules need --mesh");
    if (!strategy.empty() && !rulesFile.empty())
      return failWith("give --strategy or --rules, not both");
  }
  if (!meshSpec.empty()) {
    llvm::Expected<MeshOp> mesh = addMeshFromSpec(**module, meshSpec);
    if (!mesh)
      return failWith(llvm::toString(mesh.takeError()));
    if (!strategy.empty() || !rulesFile.empty()) {
      llvm::Expected<LogicalRules> rules = strategy.empty()
                                               ? readLogicalRules(rulesFile)
                                               : builtinStrategy(strategy);
      if (!rules)
        return failWith(llvm::toString(rules.takeError()));
      if (failed(applyLogicalRules(**module, *mesh, *rules)))
        return 1;
    }
  }
  if (failed(verify(**module)))
    return failWith("internal error: the generated module does not verify");

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output)
    return failWith(error);
  (*module)->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
