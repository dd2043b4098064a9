//===- tessel-export.cpp - a checkpoint as a Hugging Face model -----------===//
//
//   tessel-export CKPT -o OUT_DIR [--max-shard-size 5000000000]
//
// Writes the parameters of a Tessel checkpoint (its latest step, a step's
// directory, or a --save file) under the names and layouts Hugging Face's
// save_pretrained writes, as model-0000k-of-0000n.safetensors shards and
// model.safetensors.index.json, so transformers (or --init-from) loads
// them:
//   * gpt (wte.weight, h.N.attn.q_proj.weight, ...): "transformer." before
//     every name and q/k/v_proj concatenated into the fused attn.c_attn
//     ([H, 3H] weight, [3H] bias; Conv1D's [in, out] is Tessel's layout);
//     an untied lm_head.weight keeps its name;
//   * llama: the names and layouts are Hugging Face's already;
//   * moe (Mixtral): each stacked ...experts.wN.weight [E, ...] becomes E
//     tensors ...experts.K.wN.weight.
// Optimizer state and gradient sums are left out (the checkpoint's program
// description says which tensors are parameters). config.json is not
// written: take it from the model the run started from.
//
//===----------------------------------------------------------------------===//

#include "tessel/program/Program.h"
#include "tessel/support/Json.h"
#include "tessel/support/SafeTensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <set>

using namespace tessel;
namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-export options");
static cl::opt<std::string> input(cl::Positional, cl::Required,
                                  cl::desc("<checkpoint directory, step "
                                           "directory or safetensors file>"),
                                  cl::cat(category));
static cl::opt<std::string> output("o", cl::desc("Output directory"),
                                   cl::cat(category));
static cl::opt<uint64_t>
    maxShard("max-shard-size",
             cl::desc("Most bytes per shard (default 5000000000, as "
                      "save_pretrained; a larger tensor gets its own)"),
             cl::init(5000000000ull), cl::cat(category));

static int failWith(const llvm::Twine &message) {
  llvm::errs() << "tessel-export: " << message << "\n";
  return 1;
}

namespace {
/// One output tensor: its name and bytes, in the input file (`data`) or,
/// when assembled, in `owned` (read through bytes(): a vector of Outs may
/// copy them as it grows, so no pointer into `owned` is kept).
struct Out {
  std::string name;
  DType dtype;
  Shape shape;
  const uint8_t *data = nullptr;
  std::vector<uint8_t> owned;
  const uint8_t *bytes() const { return owned.empty() ? data : owned.data(); }
};
} // namespace

/// The step directory `path` names (a checkpoint directory's latest), or
/// `path` itself.
static std::string stepDirOf(llvm::StringRef path) {
  llvm::SmallString<256> latest(path);
  llvm::sys::path::append(latest, "latest");
  auto pointer = llvm::MemoryBuffer::getFile(latest);
  if (!pointer)
    return path.str();
  llvm::SmallString<256> dir(path);
  llvm::sys::path::append(dir, (*pointer)->getBuffer().trim());
  return std::string(dir);
}

/// The parameters' names, from the step's trainer_state.json (empty with
/// no description: every tensor but optimizer state by its prefix).
static llvm::Expected<std::set<std::string>>
parameterNames(llvm::StringRef stepDir) {
  llvm::SmallString<256> statePath(stepDir);
  llvm::sys::path::append(statePath, "trainer_state.json");
  std::set<std::string> names;
  auto text = llvm::MemoryBuffer::getFile(statePath);
  if (!text)
    return names;
  llvm::Expected<llvm::json::Value> state = parseJson((*text)->getBuffer());
  if (!state)
    return state.takeError();
  const llvm::json::Object *o = state->getAsObject();
  const llvm::json::Value *program = o ? o->get("program") : nullptr;
  if (!program)
    return names;
  std::string json;
  llvm::raw_string_ostream(json) << *program;
  llvm::Expected<program::Program> p = program::parseProgram(json);
  if (!p)
    return p.takeError();
  for (const program::Entry &e : p->entries)
    for (const program::TensorInfo &t : e.arguments)
      if (t.role == program::Role::Parameter)
        names.insert(t.name);
  return names;
}

/// GPT-2: q/k/v of layer `prefix` fused into c_attn (columns [q | k | v]).
static llvm::Expected<Out> fuseQkv(const MappedSafeTensors &in,
                                   llvm::StringRef prefix,
                                   llvm::StringRef kind) {
  const SafeTensorsIndex::Entry *parts[3];
  const char *names[3] = {"q_proj", "k_proj", "v_proj"};
  for (int k = 0; k < 3; ++k) {
    std::string name = (prefix + "attn." + names[k] + "." + kind).str();
    parts[k] = in.index.find(name);
    if (!parts[k] || parts[k]->shape != parts[0]->shape ||
        parts[k]->dtype != parts[0]->dtype)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          in.path + ": tensor '" + name +
              "' is missing or unlike its q/k/v siblings");
  }
  Out out;
  out.name = ("transformer." + prefix + "attn.c_attn." + kind).str();
  out.dtype = parts[0]->dtype;
  out.shape = parts[0]->shape;
  int64_t width = out.shape.back(), rows = out.shape.size() == 2 ? out.shape[0] : 1;
  int64_t element = byteSize(out.dtype);
  out.shape.back() = 3 * width;
  out.owned.resize(rows * 3 * width * element);
  for (int64_t r = 0; r < rows; ++r)
    for (int k = 0; k < 3; ++k)
      std::memcpy(out.owned.data() + (r * 3 * width + k * width) * element,
                  in.bytesOf(*parts[k]) + r * width * element,
                  width * element);
  return out;
}

/// The Hugging Face tensors of parameter `e`.
static llvm::Expected<std::vector<Out>>
convert(const MappedSafeTensors &in, const SafeTensorsIndex::Entry &e,
        bool gpt2) {
  static const llvm::Regex qkv("^(h\\.[0-9]+\\.)attn\\.(q|k|v)_proj\\.(weight|bias)$");
  static const llvm::Regex experts("^(.*\\.experts)\\.(w[123]\\.weight)$");
  llvm::SmallVector<llvm::StringRef> m;
  std::vector<Out> outs;
  if (gpt2 && qkv.match(e.name, &m)) {
    if (m[2] != "q") // emitted once, with q
      return outs;
    llvm::Expected<Out> fused = fuseQkv(in, m[1], m[3]);
    if (!fused)
      return fused.takeError();
    outs.push_back(std::move(*fused));
    return outs;
  }
  if (!gpt2 && experts.match(e.name, &m) && !e.shape.empty()) {
    Shape row(e.shape.begin() + 1, e.shape.end());
    uint64_t bytes = numElements(row) * byteSize(e.dtype);
    for (int64_t k = 0; k < e.shape[0]; ++k)
      outs.push_back({(m[1] + "." + llvm::Twine(k) + "." + m[2]).str(),
                      e.dtype, row, in.bytesOf(e) + k * bytes, {}});
    return outs;
  }
  std::string name = e.name;
  if (gpt2 && name != "lm_head.weight")
    name = "transformer." + name;
  outs.push_back({name, e.dtype, e.shape, in.bytesOf(e), {}});
  return outs;
}

/// Writes `outs` as shards of at most --max-shard-size bytes and the index.
static llvm::Error writeModel(llvm::StringRef dir, std::vector<Out> &outs) {
  std::vector<std::vector<RawTensor>> shards(1);
  uint64_t size = 0, total = 0;
  for (const Out &o : outs) {
    uint64_t bytes = numElements(o.shape) * byteSize(o.dtype);
    if (!shards.back().empty() && size + bytes > maxShard) {
      shards.emplace_back();
      size = 0;
    }
    shards.back().push_back({o.name, o.dtype, o.shape, o.bytes()});
    size += bytes;
    total += bytes;
  }
  llvm::json::Object map;
  for (size_t k = 0; k < shards.size(); ++k) {
    std::string file = llvm::formatv("model-{0:d5}-of-{1:d5}.safetensors",
                                     k + 1, shards.size());
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::Error err = writeSafeTensors(path, shards[k]))
      return err;
    for (const RawTensor &t : shards[k])
      map[t.name] = file;
  }
  llvm::json::Value index = llvm::json::Object{
      {"metadata", llvm::json::Object{{"total_size", int64_t(total)}}},
      {"weight_map", std::move(map)}};
  std::string text;
  llvm::raw_string_ostream(text) << llvm::formatv("{0:2}", index);
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "model.safetensors.index.json");
  return writeFileAtomically(path, text);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Writes a checkpoint as a Hugging Face model\n");
  if (output.empty())
    return failWith("give the output directory with -o DIR");
  std::string step = stepDirOf(input);
  llvm::Expected<MappedSafeTensors> in = MappedSafeTensors::openAny(step);
  if (!in)
    return failWith(llvm::toString(in.takeError()));
  llvm::Expected<std::set<std::string>> params = parameterNames(step);
  if (!params)
    return failWith(llvm::toString(params.takeError()));
  static const llvm::Regex state("^(adamw|sgd)\\.");
  bool gpt2 = in->index.find("wte.weight") && in->index.find("wpe.weight");
  std::vector<Out> outs;
  for (const SafeTensorsIndex::Entry &e : in->index.entries) {
    if (params->empty() ? state.match(e.name) : !params->count(e.name))
      continue;
    llvm::Expected<std::vector<Out>> converted = convert(*in, e, gpt2);
    if (!converted)
      return failWith(llvm::toString(converted.takeError()));
    for (Out &o : *converted)
      outs.push_back(std::move(o));
  }
  if (outs.empty())
    return failWith(in->path + " holds no parameters");
  if (std::error_code ec = llvm::sys::fs::create_directories(output))
    return failWith("cannot create " + output + ": " + ec.message());
  if (llvm::Error err = writeModel(output, outs))
    return failWith(llvm::toString(std::move(err)));
  llvm::outs() << output << ": " << outs.size() << " tensors"
               << (gpt2 ? " (GPT-2 names and fused c_attn)" : "") << "\n";
  return 0;
}
