//===- Checkpoint.cpp - resumable training checkpoints --------------------===//

#include "tessel/runtime/Checkpoint.h"
#include "tessel/support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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

static std::string stepName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step_%08lld", (long long)step);
  return name;
}

std::string rt::shardFileName(int64_t k, int64_t n) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05lld-of-%05lld.safetensors",
                (long long)k + 1, (long long)n);
  return name;
}

std::string rt::checkpointTempDir(llvm::StringRef dir, int64_t step,
                                  llvm::StringRef tag) {
  // The temporary is this run's own, should another run write the
  // directory despite its lock (a shared filesystem without flock).
  return join(dir, ".tmp-" + stepName(step) + "." + tag.str());
}

llvm::Error rt::beginCheckpoint(llvm::StringRef dir, llvm::StringRef temp) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create checkpoint directory " + dir + ": " +
                ec.message());
  llvm::sys::fs::remove_directories(temp);
  if (std::error_code ec = llvm::sys::fs::create_directories(temp))
    return fail("cannot create " + temp + ": " + ec.message());
  return llvm::Error::success();
}

llvm::Error
rt::finishCheckpoint(llvm::StringRef dir, int64_t step, llvm::StringRef temp,
                     const std::map<std::string, std::string> &weightMap,
                     int64_t totalBytes, llvm::StringRef programJson) {
  llvm::json::Object map;
  for (const auto &[tensor, file] : weightMap)
    map[tensor] = file;
  llvm::json::Value index = llvm::json::Object{
      {"metadata", llvm::json::Object{{"total_size", totalBytes}}},
      {"weight_map", std::move(map)}};
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
  std::string name = stepName(step), final = join(dir, name);
  llvm::sys::fs::remove_directories(final);
  if (std::error_code ec = llvm::sys::fs::rename(temp, final))
    return fail("cannot move " + temp + " to " + final + ": " + ec.message());
  return writeFileAtomically(join(dir, "latest"), name + "\n");
}

llvm::Error rt::writeCheckpoint(llvm::StringRef dir, int64_t step,
                                const NamedTensors &tensors,
                                llvm::StringRef programJson) {
  std::string temp =
      checkpointTempDir(dir, step, std::to_string(::getpid()));
  if (llvm::Error err = beginCheckpoint(dir, temp))
    return err;
  if (llvm::Error err =
          writeSafeTensors(join(temp, "model.safetensors"), tensors))
    return err;
  std::map<std::string, std::string> weightMap;
  int64_t total = 0;
  for (const auto &[tensorName, t] : tensors.tensors) {
    weightMap[tensorName] = "model.safetensors";
    total += t.size() * byteSize(t.dtype);
  }
  return finishCheckpoint(dir, step, temp, weightMap, total, programJson);
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
  llvm::Expected<MappedSafeTensors> file = MappedSafeTensors::openAny(stepDir);
  if (!file)
    return file.takeError();
  Checkpoint c;
  c.step = *step;
  c.dir = stepDir;
  c.file = std::move(*file);
  return c;
}

CheckpointLock::~CheckpointLock() {
  if (fd >= 0)
    ::close(fd); // releases the flock
}

llvm::Expected<std::unique_ptr<CheckpointLock>>
rt::lockCheckpointDir(llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create checkpoint directory " + dir + ": " +
                ec.message());
  std::string path = join(dir, ".lock");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int why = errno;
    char holder[256] = {0};
    ssize_t n = ::pread(fd, holder, sizeof(holder) - 1, 0);
    ::close(fd);
    if (why != EWOULDBLOCK)
      return fail("cannot lock " + path + ": " + std::strerror(why));
    llvm::StringRef who = n > 0 ? llvm::StringRef(holder, n).trim() : "";
    return fail("checkpoint directory " + dir + " is in use by another run" +
                (who.empty() ? llvm::Twine("") : " (last locked by " + who + ")") +
                "; give each run its own --ckpt directory");
  }
  char host[128] = "?";
  ::gethostname(host, sizeof(host) - 1);
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::string who = "pid " + std::to_string(::getpid()) + " on " + host +
                    ", since " + when + "\n";
  // Best effort: the lock holds without its note.
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, who.data(), who.size(), 0);
  return std::make_unique<CheckpointLock>(fd);
}
