//===- Split.cpp - A partitioned train step as pipeline stage functions ---===//
//
// The per-device train step of a mesh with a pipeline axis runs the same
// program on every rank of that axis. splitPipeline gives each rank its own
// function: the schedule's actions for that rank in order (the ops of one
// stage, one phase and one microbatch each), then the once-per-step part
// (gradient reductions over the other axes, the norm, the update), with
// every value that crosses ranks sent and received over the pipeline axis.
//
// Each op is classified by its `tessel.role` (forward -> F; recompute and
// backward_input -> B; backward_weight -> W; optimizer -> once per step) and
// its `tessel.stage`; ops partitioning added without them take the latest
// phase and stage of their operands. Ops that depend on no staged value
// (constants, parameter reads, gathers of split parameters, the label masks)
// are "free": each rank that needs them computes them where it needs them.
//
// Per-microbatch values used once per step (gradients, the loss) are summed
// over the microbatches in order and scaled by 1/m, as gradient
// accumulation does; sum-reductions (all-reduce, reduce-scatter) whose users
// all run once per step, and the sum of a tied parameter's gradients from
// two stages, move after the microbatch loop, so data parallelism reduces
// each gradient once per step, not once per microbatch.
//
//===----------------------------------------------------------------------===//

#include "Splitter.h"

#include "tessel/program/Describe.h"
#include "tessel/program/Signature.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline_detail;
namespace tp = ::tessel::program;

static std::optional<Phase> phaseOfRole(StringRef role) {
  return llvm::StringSwitch<std::optional<Phase>>(role)
      .Case("forward", Phase::F)
      .Case("recompute", Phase::B)
      .Case("backward_input", Phase::B)
      .Case("backward_weight", Phase::W)
      .Case("optimizer", Phase::Step)
      .Default(std::nullopt);
}

int64_t Splitter::rankOf(Value v) const {
  Operation *def = v.getDefiningOp();
  if (!def)
    return -1;
  int64_t stage = info.lookup(def).stage;
  return stage < 0 ? -1 : stage % ranks;
}

bool Splitter::perMicrobatch(Value v) const {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return isData(arg.getArgNumber());
  return info.lookup(v.getDefiningOp()).phase != Phase::Step;
}

LogicalResult Splitter::classify() {
  for (unsigned a = 0; a < step.getNumArguments(); ++a) {
    tp::Role role = tp::argumentRole(step, a);
    // A seed is data too: each microbatch has its own, as each micro-step
    // of an accumulated step has.
    if (role == tp::Role::Tokens || role == tp::Role::Labels ||
        role == tp::Role::Seed)
      dataArgs.insert(a);
  }
  int64_t stages = options.schedule.stages();
  for (Operation &op : step.getBody().front().without_terminator()) {
    OpInfo i;
    bool perMb = false;
    Phase latest = Phase::F;
    for (Value v : op.getOperands()) {
      if (!perMicrobatch(v))
        continue;
      perMb = true;
      if (Operation *def = v.getDefiningOp())
        latest = std::max(latest, info[def].phase);
    }
    if (auto role = op.getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName)) {
      std::optional<Phase> p = phaseOfRole(role.getValue());
      if (!p)
        return op.emitError() << "unknown tessel.role '" << role.getValue()
                              << "'";
      i.phase = *p;
    } else {
      i.phase = perMb ? latest : Phase::Step;
    }
    if (auto tag = op.getAttrOfType<IntegerAttr>(TesselDialect::kStageAttrName)) {
      i.stage = tag.getInt();
      if (i.stage < 0 || i.stage >= stages)
        return op.emitError() << "tessel.stage " << i.stage
                              << " is outside the pipeline's " << stages
                              << " stages";
    } else {
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp())
          i.stage = std::max(i.stage, info[def].stage);
    }
    info[&op] = i;
  }
  return success();
}

/// Whether mean_i(op(x_i)) == op(mean_i(x_i)) over microbatches i for the
/// per-microbatch operands x_i of `op`: sum-collectives, data movement,
/// sums, and scaling by a value computed once per step.
bool Splitter::commutesWithMean(Operation *op) const {
  if (auto ar = dyn_cast<AllReduceOp>(op))
    return ar.getKind() == CollectiveKind::sum;
  if (auto rs = dyn_cast<ReduceScatterOp>(op))
    return rs.getKind() == CollectiveKind::sum;
  if (isa<ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp, ConcatenateOp,
          AddOp, SubOp, NegOp>(op))
    return true;
  if (isa<MulOp>(op))
    return !perMicrobatch(op->getOperand(0)) || !perMicrobatch(op->getOperand(1));
  if (isa<DivOp>(op))
    return !perMicrobatch(op->getOperand(1));
  return false;
}

/// Ops that commute with the microbatch mean and whose users all run once
/// per step run once per step too, on the means of their operands: a
/// gradient's data-parallel all-reduce (and the reshapes and sums between it
/// and the update) runs once per step, not once per microbatch, and the two
/// stages' gradients of a tied parameter are each summed over microbatches
/// before one is sent.
void Splitter::moveReductionsAfterLoop() {
  Block &body = step.getBody().front();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    OpInfo &i = info[&op];
    if (i.phase == Phase::Step || op.getNumResults() != 1 || op.use_empty() ||
        !isa<FloatType>(getElementTypeOrSelf(op.getResult(0).getType())) ||
        !commutesWithMean(&op))
      continue;
    bool stepUsers = llvm::all_of(op.getUsers(), [&](Operation *u) {
      return u->hasTrait<OpTrait::IsTerminator>() ||
             info[u].phase == Phase::Step;
    });
    if (stepUsers)
      i.phase = Phase::Step;
  }
}

/// A once-per-step sum of scalars computed on several ranks (the global
/// norm's squares, one per parameter) is summed on each rank first, then on
/// the rank of the sum: one message per rank instead of one per term. The
/// terms are reassociated, so the last bits of the sum may differ.
void Splitter::sumByRank() {
  SmallVector<AddOp> roots;
  for (AddOp add : step.getBody().front().getOps<AddOp>()) {
    if (info[add].phase != Phase::Step ||
        cast<RankedTensorType>(add.getType()).getRank() != 0)
      continue;
    Operation *user =
        add->hasOneUse() ? *add->getUsers().begin() : nullptr;
    if (!user || !isa<AddOp>(user) || info[user].phase != Phase::Step)
      roots.push_back(add);
  }
  for (AddOp root : roots)
    sumByRank(root);
}

void Splitter::sumByRank(AddOp root) {
  // The tree: adds (once per step, used once, by the tree) under the root.
  SmallVector<Value> leaves;
  SmallVector<Operation *> tree;
  std::function<void(Value)> walk = [&](Value v) {
    auto add = v.getDefiningOp<AddOp>();
    if (add && (add == root || (v.hasOneUse() &&
                                info[add].phase == Phase::Step))) {
      tree.push_back(add);
      walk(add.getLhs());
      walk(add.getRhs());
      return;
    }
    leaves.push_back(v);
  };
  walk(root.getResult());
  int64_t rootStage = info[root].stage;
  int64_t rootRank = rootStage < 0 ? -1 : rootStage % ranks;
  // Leaves by rank, in order; free leaves are summed on the root's rank.
  std::map<int64_t, SmallVector<Value>> byRank;
  for (Value leaf : leaves) {
    int64_t r = rankOf(leaf);
    byRank[r < 0 ? rootRank : r].push_back(leaf);
  }
  bool fewerMessages = llvm::any_of(byRank, [&](auto &group) {
    return group.first != rootRank && group.second.size() > 1;
  });
  if (!fewerMessages)
    return;
  OpBuilder b(root);
  NamedAttrList attrs;
  if (Attribute role = root->getAttr(TesselDialect::kRoleAttrName))
    attrs.set(TesselDialect::kRoleAttrName, role);
  auto add = [&](Value lhs, Value rhs, int64_t stage) {
    auto sum = AddOp::create(b, root.getLoc(), lhs, rhs);
    sum->setDiscardableAttrs(attrs);
    info[sum] = {Phase::Step, stage};
    return sum.getResult();
  };
  auto stageOf = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def ? info.lookup(def).stage : int64_t(-1);
  };
  auto partial = [&](ArrayRef<Value> group) {
    Value acc = group.front();
    for (Value leaf : group.drop_front())
      acc = add(acc, leaf, std::max(stageOf(acc), stageOf(leaf)));
    return acc;
  };
  // Each other rank's partial sum, then the root's rank's, added there.
  Value total;
  for (auto &[r, group] : byRank)
    if (r != rootRank)
      total = total ? add(total, partial(group), rootStage) : partial(group);
  if (auto it = byRank.find(rootRank); it != byRank.end())
    total = add(total, partial(it->second), rootStage);
  root.getResult().replaceAllUsesWith(total);
  for (Operation *op : tree) { // the root first: each has no use left
    info.erase(op);
    op->erase();
  }
}

LogicalResult Splitter::findBoundaries() {
  Block &body = step.getBody().front();
  for (Operation &op : body) {
    bool once = op.hasTrait<OpTrait::IsTerminator>() ||
                info[&op].phase == Phase::Step;
    if (!once)
      continue;
    for (Value v : op.getOperands()) {
      if (!perMicrobatch(v))
        continue;
      if (isa<BlockArgument>(v) || rankOf(v) < 0)
        return op.emitError()
               << "pipeline-split: this op runs once per step but reads a "
                  "value that only depends on the batch; give it a "
                  "tessel.stage";
      if (!isa<FloatType>(getElementTypeOrSelf(v.getType())))
        return op.emitError()
               << "pipeline-split: a per-microbatch value of type "
               << v.getType()
               << " is used once per step; only float values (gradients, "
                  "losses) can be averaged over microbatches";
      boundary.insert(v);
    }
  }
  return success();
}

/// Records that `rank` needs `v` in `context` (a microbatch or the step),
/// through the free ops it is computed from.
LogicalResult Splitter::visit(Value v, int64_t rank, int64_t context,
                              Operation *user) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    argsOf[rank].insert(arg.getArgNumber());
    return success();
  }
  Operation *def = v.getDefiningOp();
  const OpInfo &d = info[def];
  bool inMb = context != kStepContext;
  if (d.stage < 0) {
    if (d.phase != Phase::Step && !inMb)
      return user->emitError() << "pipeline-split: runs once per step but "
                                  "reads per-microbatch data";
    if (!visited.insert({def, rank, inMb}).second)
      return success();
    for (Value o : def->getOperands())
      if (failed(visit(o, rank, context, def)))
        return failure();
    return success();
  }
  if (inMb && d.phase == Phase::Step)
    return user->emitError()
           << "pipeline-split: a microbatch's op reads a value computed once "
              "per step, after the microbatches";
  if (rankOf(v) != rank)
    receivers[v].insert({rank, inMb});
  return success();
}

LogicalResult Splitter::collectNeeds() {
  argsOf.assign(ranks, {});
  for (Operation &op : step.getBody().front().without_terminator()) {
    const OpInfo &i = info[&op];
    if (i.stage < 0)
      continue;
    int64_t r = i.stage % ranks;
    int64_t context = i.phase == Phase::Step ? kStepContext : 0;
    for (Value v : op.getOperands())
      if (failed(visit(v, r, context, &op)))
        return failure();
  }
  chooseHolders();
  auto ret = step.getBody().front().getTerminator();
  for (auto [k, v] : llvm::enumerate(ret->getOperands()))
    for (int64_t h : holders[k])
      if (failed(visit(v, h, kStepContext, ret)))
        return failure();
  return success();
}

/// A carried result (new parameter, optimizer state) is returned by every
/// rank that reads its argument; any other (the loss, the gradient norm) by
/// the last rank, which the runtime reports from.
void Splitter::chooseHolders() {
  auto ret = step.getBody().front().getTerminator();
  holders.assign(ret->getNumOperands(), {});
  for (unsigned k = 0; k < ret->getNumOperands(); ++k) {
    tp::Role role = tp::resultRole(step, k);
    std::string name = tp::resultName(step, k);
    if (tp::isCarried(role))
      for (int64_t r = 0; r < ranks; ++r)
        for (unsigned a : argsOf[r])
          if (tp::argumentRole(step, a) == role && tp::argName(step, a) == name)
            holders[k].push_back(r);
    if (holders[k].empty())
      holders[k].push_back(tp::isCarried(role)
                               ? std::max<int64_t>(rankOf(ret->getOperand(k)), 0)
                               : ranks - 1);
  }
}

void Splitter::makeMeshes() {
  OpBuilder b(mesh);
  b.setInsertionPointAfter(mesh);
  int64_t axis = mesh.getAxisIndex(options.axis);
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  for (auto [k, name] : llvm::enumerate(mesh.getAxisNames()))
    if (int64_t(k) != axis) {
      names.push_back(name);
      sizes.push_back(mesh.getAxisSizes()[k]);
    }
  if (names.empty()) { // stages of one device: a mesh of one
    names.push_back(b.getStringAttr(options.axis));
    sizes.push_back(1);
  }
  int64_t n = mesh.getNumDevices(), inner = 1;
  for (int64_t k = axis + 1; k < mesh.getRank(); ++k)
    inner *= mesh.getAxisSizes()[k];
  std::optional<ArrayRef<int64_t>> devices = mesh.getDevices();
  for (int64_t r = 0; r < ranks; ++r) {
    SmallVector<int64_t> ids;
    for (int64_t d = 0; d < n; ++d)
      if ((d / inner) % ranks == r)
        ids.push_back(devices ? (*devices)[d] : d);
    std::string name =
        (mesh.getSymName() + "_" + options.axis + Twine(r)).str();
    MeshOp::create(b, mesh.getLoc(), name, b.getArrayAttr(names), sizes,
                   b.getDenseI64ArrayAttr(ids));
    subMeshes.push_back(name);
  }
}

LogicalResult Splitter::run() {
  if (failed(classify()))
    return failure();
  moveReductionsAfterLoop();
  sumByRank();
  if (failed(findBoundaries()) || failed(collectNeeds()))
    return failure();
  makeMeshes();
  for (int64_t r = 0; r < ranks; ++r)
    if (failed(emitRank(r)))
      return failure();
  SmallVector<Attribute> names;
  for (const std::string &f : functions)
    names.push_back(FlatSymbolRefAttr::get(module.getContext(), f));
  MLIRContext *ctx = module.getContext();
  const pl::ScheduleOptions &s = options.schedule;
  Builder b(ctx);
  module->setAttr(
      kPipelineAttrName,
      b.getDictionaryAttr({
          b.getNamedAttr("schedule", b.getStringAttr(pl::scheduleName(s.kind))),
          b.getNamedAttr("ranks", b.getI64IntegerAttr(s.ranks)),
          b.getNamedAttr("virtual", b.getI64IntegerAttr(s.virtualStages)),
          b.getNamedAttr("microbatches", b.getI64IntegerAttr(s.microbatches)),
          b.getNamedAttr("axis", b.getStringAttr(options.axis)),
          b.getNamedAttr("mesh", FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
          b.getNamedAttr("functions", b.getArrayAttr(names)),
      }));
  step.erase();
  return success();
}


LogicalResult mlir::tessel::splitPipeline(ModuleOp module,
                                          const PipelineSplitOptions &options) {
  auto step = module.lookupSymbol<func::FuncOp>(options.func);
  if (!step || step.isExternal())
    return module.emitError() << "pipeline-split: no function @"
                              << options.func << " to split";
  auto spmd = step->getAttrOfType<FlatSymbolRefAttr>(TesselDialect::kSpmdAttrName);
  if (!spmd)
    return step.emitError() << "pipeline-split: @" << options.func
                            << " is not partitioned yet (no tessel.spmd); "
                               "run --tessel-partition first";
  auto mesh = module.lookupSymbol<MeshOp>(spmd.getValue());
  if (!mesh || mesh.getAxisIndex(options.axis) < 0)
    return step.emitError() << "pipeline-split: the mesh of @" << options.func
                            << " has no axis '" << options.axis
                            << "' to pipeline over";
  pl::ScheduleOptions s = options.schedule;
  s.ranks = mesh.getAxisSize(options.axis);
  if (llvm::Error err = pl::checkScheduleOptions(s))
    return step.emitError() << "pipeline-split: "
                            << llvm::toString(std::move(err));
  WalkResult crossing = step.walk([&](Operation *op) -> WalkResult {
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    if (axes && llvm::any_of(axes, [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == options.axis;
        }))
      return op->emitError() << "pipeline-split: communicates over the "
                                "pipeline axis '"
                             << options.axis
                             << "'; no sharding may use that axis";
    return WalkResult::advance();
  });
  if (crossing.wasInterrupted())
    return failure();
  llvm::Expected<pl::Schedule> schedule = pl::buildSchedule(s);
  if (!schedule)
    return step.emitError() << "pipeline-split: "
                            << llvm::toString(schedule.takeError());
  if (llvm::Expected<pl::Simulation> sim = pl::simulate(*schedule); !sim)
    return step.emitError() << "pipeline-split: "
                            << llvm::toString(sim.takeError());
  PipelineSplitOptions o = options;
  o.schedule = s;
  Splitter splitter(module, step, mesh, o, *schedule);
  return splitter.run();
}

FailureOr<pl::ScheduleOptions> mlir::tessel::pipelineScheduleOf(ModuleOp module) {
  auto attr = module->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  if (!attr)
    return failure();
  auto kind = pl::parseScheduleKind(
      attr.getAs<StringAttr>("schedule").getValue());
  if (!kind) {
    llvm::consumeError(kind.takeError());
    return failure();
  }
  pl::ScheduleOptions s;
  s.kind = *kind;
  s.ranks = attr.getAs<IntegerAttr>("ranks").getInt();
  s.virtualStages = attr.getAs<IntegerAttr>("virtual").getInt();
  s.microbatches = attr.getAs<IntegerAttr>("microbatches").getInt();
  return s;
}
