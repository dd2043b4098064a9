//===- Checkpoint.cpp - resumable training checkpoints --------------------===//

#include "tessel/runtime/Checkpoint.h"
#include "tessel/support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace tessel;
using namespace tessel::rt;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string join(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return p.str().str();
}

llvm::Error rt::writeCheckpoint(llvm::StringRef dir, int64_t step,
                                const NamedTensors &tensors,
                                llvm::StringRef programJson) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create checkpoint directory " + dir + ": " +
                ec.message());
  char name[32];
  std::snprintf(name, sizeof(name), "step_%08lld", (long long)step);
  std::string final = join(dir, name),
              temp = join(dir, std::string(".tmp-") + name);
  llvm::sys::fs::remove_directories(temp);
  if (std::error_code ec = llvm::sys::fs::create_directories(temp))
    return fail("cannot create " + temp + ": " + ec.message());
  if (llvm::Error err =
          writeSafeTensors(join(temp, "model.safetensors"), tensors))
    return err;
  llvm::json::Object weightMap;
  int64_t total = 0;
  for (const auto &[tensorName, t] : tensors.tensors) {
    weightMap[tensorName] = "model.safetensors";
    total += t.size() * byteSize(t.dtype);
  }
  llvm::json::Value index = llvm::json::Object{
      {"metadata", llvm::json::Object{{"total_size", total}}},
      {"weight_map", std::move(weightMap)}};
  std::string text;
  llvm::raw_string_ostream(text) << llvm::formatv("{0:2}", index);
  if (llvm::Error err =
          writeFileAtomically(join(temp, "model.safetensors.index.json"), text))
    return err;
  llvm::Expected<llvm::json::Value> program = ::tessel::parseJson(programJson);
  if (!program)
    return fail("the program description is not JSON: " +
                llvm::toString(program.takeError()));
  llvm::json::Value state =
      llvm::json::Object{{"step", step}, {"program", std::move(*program)}};
  text.clear();
  llvm::raw_string_ostream(text) << llvm::formatv("{0:2}", state);
  if (llvm::Error err =
          writeFileAtomically(join(temp, "trainer_state.json"), text))
    return err;
  // Replace an older copy of the same step, then point `latest` at it.
  llvm::sys::fs::remove_directories(final);
  if (std::error_code ec = llvm::sys::fs::rename(temp, final))
    return fail("cannot move " + temp + " to " + final + ": " + ec.message());
  return writeFileAtomically(join(dir, "latest"), std::string(name) + "\n");
}

llvm::Expected<Checkpoint> rt::readLatestCheckpoint(llvm::StringRef dir) {
  std::string latest = join(dir, "latest");
  auto pointer = llvm::MemoryBuffer::getFile(latest);
  if (!pointer)
    return fail(latest + ": no checkpoint to resume from (" +
                pointer.getError().message() + ")");
  std::string name = (*pointer)->getBuffer().trim().str();
  std::string stepDir = join(dir, name);
  std::string statePath = join(stepDir, "trainer_state.json");
  auto stateText = llvm::MemoryBuffer::getFile(statePath);
  if (!stateText)
    return fail(statePath + ": " + stateText.getError().message());
  llvm::Expected<llvm::json::Value> state =
      ::tessel::parseJson((*stateText)->getBuffer());
  if (!state)
    return fail(statePath + ": " + llvm::toString(state.takeError()));
  std::optional<int64_t> step;
  if (const llvm::json::Object *o = state->getAsObject())
    step = o->getInteger("step");
  if (!step || *step < 0)
    return fail(statePath + ": no \"step\"");
  llvm::Expected<MappedSafeTensors> file =
      MappedSafeTensors::open(join(stepDir, "model.safetensors"));
  if (!file)
    return file.takeError();
  Checkpoint c;
  c.step = *step;
  c.file = std::move(*file);
  return c;
}
