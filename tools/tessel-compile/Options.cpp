//===- Options.cpp - tessel-compile's --optimizer and --pipeline ----------===//

#include "Driver.h"

#include "tessel/passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tessel;
using llvm::SmallVector;
using llvm::StringRef;

namespace {

/// The option names of --tessel-train-step that --optimizer may set (from
/// the pass itself; tessel-compile sets func, optimizer and lr-argument).
std::vector<std::string> trainStepOptionNames() {
  std::string text;
  llvm::raw_string_ostream os(text);
  TesselTrainStepPassOptions options;
  options.batchNames = {"x"}; // an empty list option is not printed
  createTesselTrainStepPass(options)->printAsTextualPipeline(os);
  std::vector<std::string> names;
  StringRef body = StringRef(text).split('{').second.rsplit('}').first;
  for (StringRef kv : llvm::split(body, ' ')) {
    StringRef key = kv.split('=').first;
    if (!key.empty() && key != "func" && key != "optimizer" &&
        key != "lr-argument")
      names.push_back(key.str());
  }
  return names;
}

} // namespace

/// --optimizer "NAME key=value ..." as --tessel-train-step options, in the
/// spellings PyTorch users type too: AdamW/SGD in any case, snake_case keys,
/// eps, betas=0.9,0.95, wd, max_grad_norm, warmup_steps, learning_rate. An
/// unknown key is an error naming the nearest known one and listing all.
llvm::Expected<std::string> tessel_compile::optimizerOptions(StringRef spec) {
  auto fail = [](const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--optimizer: " + m);
  };
  SmallVector<StringRef> words;
  spec.split(words, ' ', -1, false);
  if (words.empty())
    return fail("give an optimizer: adamw or sgd");
  std::string name = words.front().lower();
  if (name != "adamw" && name != "sgd")
    return fail("unknown optimizer '" + words.front() +
                "'; the optimizers are adamw and sgd (adamw with "
                "weight-decay=0 is Adam)");
  std::vector<std::string> known = trainStepOptionNames();
  static const std::pair<const char *, const char *> aliases[] = {
      {"eps", "epsilon"},          {"wd", "weight-decay"},
      {"max-grad-norm", "clip-norm"}, {"grad-clip", "clip-norm"},
      {"warmup-steps", "warmup"},  {"learning-rate", "lr"}};
  std::string out = "optimizer=" + name;
  for (StringRef word : llvm::drop_begin(words)) {
    auto [rawKey, value] = word.split('=');
    std::string key = rawKey.lower();
    std::replace(key.begin(), key.end(), '_', '-');
    for (auto [from, to] : aliases)
      if (key == from)
        key = to;
    if (key == "betas") {
      auto [b1, b2] = value.split(',');
      if (b1.empty() || b2.empty() || b2.contains(','))
        return fail("betas takes two values, as betas=0.9,0.95");
      out += " beta1=" + b1.str() + " beta2=" + b2.str();
      continue;
    }
    if (!llvm::is_contained(known, key)) {
      std::string nearest;
      unsigned best = ~0u;
      for (const std::string &k : known)
        if (unsigned d = StringRef(key).edit_distance(k); d < best)
          best = d, nearest = k;
      return fail("unknown option '" + rawKey + "'" +
                  (best <= std::max<size_t>(1, key.size() / 3)
                       ? " (did you mean " + nearest + "?)"
                       : "") +
                  "; the options are: " + llvm::join(known, ", "));
    }
    out += " " + key + (word.contains('=') ? "=" + value.str() : "");
  }
  return out;
}


llvm::Expected<tessel_compile::PipelineRequest>
tessel_compile::parsePipeline(StringRef spec) {
  PipelineRequest p;
  bool virtualGiven = false;
  for (StringRef word : llvm::split(spec, ' ')) {
    if (word.empty())
      continue;
    auto [key, value] = word.split('=');
    bool bad = false;
    if (key == "axis")
      p.axis = value.str();
    else if (key == "schedule")
      p.schedule = value.str();
    else if (key == "stages")
      p.stages = value.str();
    else if (key == "microbatches")
      bad = value.getAsInteger(10, p.microbatches) || p.microbatches < 1;
    else if (key == "virtual") {
      bad = value.getAsInteger(10, p.virtualStages) || p.virtualStages < 1;
      virtualGiven = true;
    }
    else
      return llvm::createStringError(
          "--pipeline: unknown option '" + key.str() +
          "'; the options are schedule, microbatches, stages, virtual, axis");
    if (bad || value.empty())
      return llvm::createStringError("--pipeline: " + key.str() +
                                     " needs a positive number, not '" +
                                     value.str() + "'");
  }
  // Interleaving is two or more virtual stages per rank; two unless told.
  if (p.schedule == "interleaved" && !virtualGiven)
    p.virtualStages = 2;
  return p;
}

