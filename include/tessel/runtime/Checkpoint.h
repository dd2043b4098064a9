//===- Checkpoint.h - resumable training checkpoints ------------*- C++ -*-===//
//
// A checkpoint directory holds one sub-directory per saved step:
//
//   DIR/step_00000100/model-00001-of-00004.safetensors  global tensors, by
//   ...                                                  name, one shard per
//   DIR/step_00000100/model-00004-of-00004.safetensors  writing rank
//   DIR/step_00000100/model.safetensors.index.json  Hugging Face index
//   DIR/step_00000100/trainer_state.json            {"step": 100, ...}
//   DIR/latest                                       "step_00000100"
//
// Tensors have global (mesh-independent) shapes, so a checkpoint written on
// one mesh loads on another. A step is written into a temporary directory
// renamed into place, and `latest` is replaced atomically after it: a crash
// leaves the previous checkpoint intact and `latest` pointing at it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CHECKPOINT_H
#define TESSEL_RUNTIME_CHECKPOINT_H

#include "tessel/support/SafeTensors.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>

namespace tessel::rt {

struct Checkpoint {
  int64_t step = 0; ///< steps completed
  std::string dir;  ///< the step's directory
  /// The shards its index names, read as one file (or the one
  /// model.safetensors of a step without an index).
  MappedSafeTensors file;
};

/// Shard `k` (from 0) of `n`: "model-00001-of-00004.safetensors", as
/// Hugging Face names them.
std::string shardFileName(int64_t k, int64_t n);
/// Where the step after `step` steps is assembled before
/// finishCheckpoint moves it into place: DIR/.tmp-step_N.TAG (`tag` is the
/// writing run's, as its rank 0's process id).
std::string checkpointTempDir(llvm::StringRef dir, int64_t step,
                              llvm::StringRef tag);
/// Creates `temp` afresh (removing what an earlier try left): call once,
/// before any shard is written into it.
llvm::Error beginCheckpoint(llvm::StringRef dir, llvm::StringRef temp);
/// Completes the step: writes the index (`weightMap`: each tensor's shard
/// file; `totalBytes`), trainer_state.json, moves `temp` to DIR/step_N and
/// points `latest` at it.
llvm::Error finishCheckpoint(llvm::StringRef dir, int64_t step,
                             llvm::StringRef temp,
                             const std::map<std::string, std::string> &weightMap,
                             int64_t totalBytes, llvm::StringRef programJson);

/// Writes `tensors` as the checkpoint after `step` steps, in one file.
llvm::Error writeCheckpoint(llvm::StringRef dir, int64_t step,
                            const NamedTensors &tensors,
                            llvm::StringRef programJson);

/// Reads the checkpoint `dir/latest` names.
llvm::Expected<Checkpoint> readLatestCheckpoint(llvm::StringRef dir);

/// Holds the exclusive lock of a checkpoint directory (`DIR/.lock`, an
/// flock(2) lock that the system drops when the process ends) for as long
/// as it lives.
class CheckpointLock {
public:
  explicit CheckpointLock(int fd) : fd(fd) {}
  CheckpointLock(const CheckpointLock &) = delete;
  CheckpointLock &operator=(const CheckpointLock &) = delete;
  ~CheckpointLock();

private:
  int fd;
};

/// Takes `dir`'s lock (creating `dir`), or fails naming the run that holds
/// it: two runs writing one directory would overwrite each other's steps
/// and `latest`.
llvm::Expected<std::unique_ptr<CheckpointLock>>
lockCheckpointDir(llvm::StringRef dir);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CHECKPOINT_H
