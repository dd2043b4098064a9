//===- Splitter.h - The state of one pipeline split ---------------*- C++ -*-===//
//
// Private to lib/Pipeline: Split.cpp classifies the step's ops and finds
// what crosses ranks; SplitEmit.cpp writes each rank's function.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_PIPELINE_SPLITTER_H
#define TESSEL_LIB_PIPELINE_SPLITTER_H

#include "tessel/pipeline/Pipeline.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlir::tessel::pipeline_detail {

namespace pl = ::tessel::pipeline;

/// When an op runs: in one of a microbatch's phases or once per step.
enum class Phase : uint8_t { F = 0, B = 1, W = 2, Step = 3 };

struct OpInfo {
  Phase phase = Phase::Step;
  int64_t stage = -1; ///< -1: free (depends on no staged value)
};

/// A context ops are emitted in: microbatch `mb`, or once per step (-1).
constexpr int64_t kStepContext = -1;

class Splitter {
public:
  Splitter(ModuleOp module, func::FuncOp step, MeshOp mesh,
           const PipelineSplitOptions &o, const pl::Schedule &schedule)
      : module(module), step(step), mesh(mesh), options(o),
        schedule(schedule), ranks(o.schedule.ranks),
        microbatches(o.schedule.microbatches) {}

  LogicalResult run();

private:
  LogicalResult classify();
  bool commutesWithMean(Operation *op) const;
  void moveReductionsAfterLoop();
  void sumByRank();
  void sumByRank(AddOp root);
  LogicalResult findBoundaries();
  LogicalResult collectNeeds();
  LogicalResult visit(Value v, int64_t rank, int64_t context, Operation *user);
  void chooseHolders();
  void makeMeshes();
  LogicalResult emitRank(int64_t rank);

  int64_t rankOf(Value v) const;
  bool isData(unsigned arg) const { return dataArgs.contains(arg); }
  bool perMicrobatch(Value v) const;

  ModuleOp module;
  func::FuncOp step;
  MeshOp mesh;
  const PipelineSplitOptions &options;
  const pl::Schedule &schedule;
  int64_t ranks, microbatches;

  llvm::DenseMap<Operation *, OpInfo> info;
  llvm::DenseSet<unsigned> dataArgs;
  /// Per-microbatch values used once per step: summed over microbatches.
  llvm::SetVector<Value> boundary;
  /// Values each rank receives, in microbatch or step context.
  std::map<std::pair<int64_t, int64_t>, llvm::SetVector<Value>> needs;
  /// Who receives each value: (rank, context is a microbatch).
  llvm::DenseMap<Value, std::set<std::pair<int64_t, bool>>> receivers;
  std::vector<std::set<unsigned>> argsOf;
  std::set<std::tuple<Operation *, int64_t, bool>> visited;
  /// For each result of the step, the ranks that return it.
  std::vector<std::vector<int64_t>> holders;
  std::vector<std::string> subMeshes;
  std::vector<std::string> functions;
  /// The channel of value v sent in context c (a microbatch or the step),
  /// the same for its sender and receiver.
  llvm::DenseMap<std::pair<Value, int64_t>, int64_t> channels;

  friend class RankEmitter;
};

} // namespace mlir::tessel::pipeline_detail

#endif // TESSEL_LIB_PIPELINE_SPLITTER_H
