//===- Propagator.h - the state and steps of sharding propagation -*- C++ -*-===//
//
// Shared by Propagation.cpp (seeding, the per-op step, the worklists) and
// PropagationOutput.cpp (writing shardings back, `explain`).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_SHARDING_PROPAGATOR_H
#define TESSEL_LIB_SHARDING_PROPAGATOR_H

#include "tessel/sharding/Propagation.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/sharding/Projection.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>
#include <limits>
#include <memory>
#include <set>

namespace mlir::tessel::propagation {

constexpr int64_t kNoPriority = std::numeric_limits<int64_t>::max();

using Axes = SmallVector<StringAttr, 2>;

/// Where a dimension's sharding came from: the root user annotation and the
/// last hop (the value it was copied from and the op it went through).
struct Origin {
  std::string root; ///< "argument #0 of @f (file:1:2)", ...
  Value from;
  Operation *via = nullptr;
};

struct DimState {
  Axes axes;
  bool closed = false;
  bool user = false;
  /// For ranking: the user's, or inherited from the source; a dimension
  /// without a priority ranks as p0.
  int64_t priority = 0;
  int64_t userPriority = kNoPriority; ///< as annotated (what is printed)
  const Origin *origin = nullptr;
};

struct TensorState {
  FlatSymbolRefAttr mesh;
  SmallVector<DimState, 4> dims;
};

struct Conflict {
  Operation *op;
  int64_t factor;
  std::string kept, dropped, reason;
};

inline bool isPrefix(ArrayRef<StringAttr> a, ArrayRef<StringAttr> b) {
  return a.size() <= b.size() && a == b.take_front(a.size());
}

class Propagator {
public:
  Propagator(ModuleOp module, const PropagationOptions &options)
      : module(module), options(options) {}

  LogicalResult run();

private:
  LogicalResult seedFunction(func::FuncOp func);
  /// Seeds `v` with a user's sharding; `soft` ones (function results) give
  /// way where they would split two dimensions over one axis.
  LogicalResult seed(Value v, ShardingAttr sharding, Location loc,
                     const std::string &what, bool soft = false);
  LogicalResult checkOp(Operation *op);
  OpShardingRuleAttr ruleOf(Operation *op);
  /// Propagates through `op`; appends the values that changed.
  void propagate(Operation *op, SmallVectorImpl<Value> &changed);
  /// One op's tensors (operands, then results) and their rule mappings.
  struct OpView {
    Operation *op;
    OpShardingRuleAttr rule;
    SmallVector<Value, 8> tensors;
    SmallVector<TensorMappingAttr, 8> mappings;
    FlatSymbolRefAttr mesh;
    unsigned numOperands;
    bool backwardOnly; ///< a broadcast before the last stage
  };
  /// What one tensor dimension offers one factor.
  struct Candidate {
    Axes axes;
    int64_t priority;
    int64_t size;
    unsigned tensor;
    const Origin *origin;
  };
  using Candidates = SmallVector<Candidate, 4>;
  /// Per factor, what the tensors' dimensions offer it (projected).
  SmallVector<Candidates, 4> collectCandidates(const OpView &view);
  /// Per factor, the axes chosen (priority, then the larger tensor, then
  /// operand order) and the candidate they come from; records conflicts.
  void chooseFactorAxes(const OpView &view,
                        MutableArrayRef<Candidates> candidates,
                        MutableArrayRef<Axes> chosen,
                        MutableArrayRef<const Candidate *> winner);
  /// Extends the open dimensions whose axes are a prefix of what the
  /// chosen factors give them; appends the values that changed.
  void projectBack(const OpView &view, ArrayRef<Axes> chosen,
                   ArrayRef<const Candidate *> winner,
                   SmallVectorImpl<Value> &changed);
  /// Which ops propagate, and how, in one worklist run (see run()).
  enum class Stage {
    Pointwise,          ///< element-wise ops only, both ways
    BroadcastsBackward, ///< every op; broadcasts only result -> operand
    All,                ///< every op both ways
  };
  bool runWorklist(func::FuncOp func, Stage stage);
  void writeBack(func::FuncOp func);
  void printExplanation(func::FuncOp func);

  TensorState &stateOf(Value v) {
    auto [it, inserted] = states.try_emplace(v);
    if (inserted)
      it->second.dims.resize(cast<RankedTensorType>(v.getType()).getRank());
    return it->second;
  }
  MeshOp meshOp(FlatSymbolRefAttr mesh) {
    return meshes.lookup(mesh.getAttr());
  }
  std::string name(Value v) {
    // Naming values walks the whole module: only for messages.
    if (!asmState)
      asmState = std::make_unique<AsmState>(module);
    std::string s;
    llvm::raw_string_ostream os(s);
    v.printAsOperand(os, *asmState);
    return s;
  }
  const Origin *newOrigin(Origin o) {
    origins.push_back(std::move(o));
    return &origins.back();
  }

  ModuleOp module;
  const PropagationOptions &options;
  std::unique_ptr<AsmState> asmState;
  llvm::DenseMap<Attribute, MeshOp> meshes;
  llvm::DenseMap<Value, TensorState> states;
  llvm::DenseMap<Operation *, OpShardingRuleAttr> rules;
  std::deque<Origin> origins;
  std::vector<Conflict> conflicts;
  std::set<std::string> conflictKeys;
  int64_t phase = 0;
  Stage stage = Stage::All;
};

} // namespace mlir::tessel::propagation

#endif // TESSEL_LIB_SHARDING_PROPAGATOR_H
