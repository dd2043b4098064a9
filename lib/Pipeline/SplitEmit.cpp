//===- SplitEmit.cpp - One rank's function of a split pipeline ------------===//
//
// Writes the function of one rank of the pipeline axis: its actions in the
// schedule's order, then its once-per-step ops. The ops of one stage and
// phase are outlined once, as a private function (`<rank fn>_stage<s>_<kind>`)
// that each microbatch's action calls: the stage's code is compiled once,
// not once per microbatch. A call's operands come from the microbatch's (or
// the step's) earlier results, from the function's arguments (token batches
// gain a leading microbatch dimension and are sliced), or from a tessel.recv
// of the rank that computes them, which sends right after its call. Free
// ops (those that depend on no staged value) are cloned into each function
// that reads them.
//
//===----------------------------------------------------------------------===//

#include "Splitter.h"
#include "tessel/program/Describe.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline_detail;
namespace tp = ::tessel::program;

namespace mlir::tessel::pipeline_detail {

/// The ops of one stage and phase as a private function: what it reads
/// from outside (with an op that reads it, for diagnostics) and what it
/// returns (the values read outside it).
struct Outlined {
  func::FuncOp callee;
  SmallVector<Value> inputs;
  SmallVector<Operation *> readers;
  SmallVector<Value> outputs;
};

class RankEmitter {
public:
  RankEmitter(Splitter &s, int64_t rank)
      : s(s), rank(rank), b(s.module.getContext()),
        mbMaps(s.microbatches) {}

  LogicalResult emit();

private:
  void makeFunction();
  SmallVector<Operation *> opsOf(const pl::Action &a);
  const Outlined &outline(const pl::Action &a);
  LogicalResult emitAction(const pl::Action &a, int64_t index);
  DictionaryAttr rewriteAttrs(DictionaryAttr attrs, bool data);
  FailureOr<Value> lookup(Value v, int64_t context, Operation *user);
  LogicalResult emitOp(Operation *op, int64_t context);
  void defined(Value v, Value local, int64_t context);
  void accumulate(Value v, Value local);
  void send(Value local, int64_t target, int64_t channel);
  int64_t channelOf(Value v, int64_t context);
  IRMapping &mapFor(int64_t context) {
    return context == kStepContext ? stepMap : mbMaps[context];
  }

  Splitter &s;
  int64_t rank;
  OpBuilder b;
  func::FuncOp func;
  llvm::DenseMap<unsigned, unsigned> argIndex; ///< step's -> this function's
  std::vector<IRMapping> mbMaps;
  IRMapping stepMap;
  llvm::DenseMap<Value, std::pair<Value, int64_t>> sums; ///< sum, count
  /// The receives of the action being emitted (moved before its region).
  SmallVector<Operation *> received;
  std::map<std::pair<int64_t, pl::ActionKind>, Outlined> outlined;
};

} // namespace mlir::tessel::pipeline_detail

/// `attrs` with its sharding on this rank's sub-mesh; a token batch's
/// sharding and global type gain the leading microbatch dimension.
DictionaryAttr RankEmitter::rewriteAttrs(DictionaryAttr attrs, bool data) {
  MLIRContext *ctx = b.getContext();
  NamedAttrList list(attrs);
  if (auto sh = list.get(TesselDialect::kShardingAttrName)) {
    auto sharding = cast<ShardingAttr>(sh);
    SmallVector<DimShardingAttr> dims;
    if (data)
      dims.push_back(DimShardingAttr::get(ctx, {}, false, std::nullopt));
    llvm::append_range(dims, sharding.getDims());
    list.set(TesselDialect::kShardingAttrName,
             ShardingAttr::get(ctx, FlatSymbolRefAttr::get(ctx, s.subMeshes[rank]),
                               dims));
  }
  if (auto axes = list.get(TesselDialect::kLogicalAxesAttrName); axes && data) {
    SmallVector<Attribute> names{b.getStringAttr("microbatch")};
    llvm::append_range(names, cast<ArrayAttr>(axes));
    list.set(TesselDialect::kLogicalAxesAttrName, b.getArrayAttr(names));
  }
  if (auto g = list.get(TesselDialect::kGlobalTypeAttrName); g && data) {
    auto t = cast<RankedTensorType>(cast<TypeAttr>(g).getValue());
    SmallVector<int64_t> shape{s.microbatches};
    llvm::append_range(shape, t.getShape());
    list.set(TesselDialect::kGlobalTypeAttrName, TypeAttr::get(t.clone(shape)));
  }
  return list.getDictionary(ctx);
}

void RankEmitter::makeFunction() {
  func::FuncOp step = s.step;
  SmallVector<Type> inputs, results;
  SmallVector<Attribute> argAttrs, resultAttrs;
  for (unsigned a : s.argsOf[rank]) {
    auto t = cast<RankedTensorType>(step.getArgumentTypes()[a]);
    bool data = s.isData(a);
    if (data) {
      SmallVector<int64_t> shape{s.microbatches};
      llvm::append_range(shape, t.getShape());
      t = t.clone(shape);
    }
    argIndex[a] = inputs.size();
    inputs.push_back(t);
    DictionaryAttr attrs = rewriteAttrs(step.getArgAttrDict(a), data);
    if (data && tp::argumentRole(step, a) == tp::Role::Seed) {
      // The role a name gave a scalar seed stays with the batch of them.
      NamedAttrList list(attrs);
      list.set(TesselDialect::kRuntimeRoleAttrName,
               b.getStringAttr(tp::roleName(tp::argumentRole(step, a))));
      attrs = list.getDictionary(b.getContext());
    }
    argAttrs.push_back(attrs);
  }
  for (unsigned k = 0; k < step.getNumResults(); ++k)
    if (llvm::is_contained(s.holders[k], rank)) {
      results.push_back(step.getResultTypes()[k]);
      resultAttrs.push_back(rewriteAttrs(step.getResultAttrDict(k), false));
    }
  std::string name = (step.getSymName() + "_" + s.options.axis + Twine(rank)).str();
  b.setInsertionPoint(step);
  func = func::FuncOp::create(b, step.getLoc(), name,
                              b.getFunctionType(inputs, results));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func->setAttr(TesselDialect::kSpmdAttrName,
                FlatSymbolRefAttr::get(b.getContext(), s.subMeshes[rank]));
  func->setAttr(kPipelineRankAttrName, b.getI64IntegerAttr(rank));
  SmallVector<Attribute> regions;
  for (const pl::Action &a : s.schedule.actions[rank])
    regions.push_back(b.getStringAttr(pl::actionName(a)));
  regions.push_back(b.getStringAttr("optimizer"));
  func->setAttr(kRegionsAttrName, b.getArrayAttr(regions));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  s.functions.push_back(name);
}

int64_t RankEmitter::channelOf(Value v, int64_t context) {
  auto [it, fresh] = s.channels.try_emplace({v, context}, s.channels.size());
  return it->second;
}

void RankEmitter::send(Value local, int64_t target, int64_t channel) {
  SendOp::create(b, local.getLoc(), local,
                 s.mesh.getSymName(),
                 b.getStrArrayAttr({s.options.axis}), uint64_t(target),
                 uint64_t(channel));
}

FailureOr<Value> RankEmitter::lookup(Value v, int64_t context,
                                     Operation *user) {
  IRMapping &m = mapFor(context);
  if (Value local = m.lookupOrNull(v))
    return local;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Value local = func.getArgument(argIndex.at(arg.getArgNumber()));
    if (s.isData(arg.getArgNumber())) {
      // Microbatch `context` of the batch: [m, ...] -> [1, ...] -> [...].
      auto t = cast<RankedTensorType>(local.getType());
      SmallVector<int64_t> start(t.getRank(), 0), limit(t.getShape()),
          strides(t.getRank(), 1);
      start[0] = context;
      limit[0] = context + 1;
      Value slice = SliceOp::create(b, v.getLoc(), local, start, limit, strides);
      local = ReshapeOp::create(b, v.getLoc(), v.getType(), slice);
    }
    m.map(v, local);
    return local;
  }
  Operation *def = v.getDefiningOp();
  if (s.info[def].stage < 0) {
    if (failed(emitOp(def, context)))
      return failure();
    return m.lookup(v);
  }
  int64_t source = s.rankOf(v);
  if (source == rank)
    return user->emitError()
           << "pipeline-split: rank " << rank << " reads a value before the "
           << "schedule computes it (context " << context << ")";
  bool mb = context != kStepContext && s.perMicrobatch(v);
  auto local = RecvOp::create(b, v.getLoc(), v.getType(),
                               s.mesh.getSymName(),
                               b.getStrArrayAttr({s.options.axis}), uint64_t(source),
                               uint64_t(channelOf(v, mb ? context : kStepContext)));
  received.push_back(local);
  m.map(v, local);
  return Value(local);
}

LogicalResult RankEmitter::emitOp(Operation *op, int64_t context) {
  IRMapping &m = mapFor(context);
  for (Value v : op->getOperands()) {
    FailureOr<Value> local = lookup(v, context, op);
    if (failed(local))
      return failure();
    m.map(v, *local);
  }
  Operation *clone = b.clone(*op, m);
  if (s.info[op].stage >= 0)
    for (auto [v, local] : llvm::zip(op->getResults(), clone->getResults()))
      defined(v, local, context);
  return success();
}

/// Sends `v` (just computed as `local`) to the ranks that read it, and adds
/// it to its microbatch sum if the step reads it.
void RankEmitter::defined(Value v, Value local, int64_t context) {
  bool mb = context != kStepContext;
  if (mb && s.boundary.contains(v))
    accumulate(v, local);
  auto it = s.receivers.find(v);
  if (it == s.receivers.end())
    return;
  for (auto [r, inMb] : it->second)
    if (inMb && mb)
      send(local, r, channelOf(v, context));
    else if (!inMb && !mb)
      send(local, r, channelOf(v, kStepContext));
}

/// The running sum of `v` over microbatches; after the last, the mean (the
/// sum times 1/m, as gradient accumulation scales it) is the step's `v`.
void RankEmitter::accumulate(Value v, Value local) {
  auto &[sum, count] = sums[v];
  sum = count == 0 ? local : Value(AddOp::create(b, v.getLoc(), sum, local));
  if (++count < s.microbatches)
    return;
  Value mean = sum;
  if (s.microbatches > 1) {
    auto t = cast<RankedTensorType>(v.getType());
    auto ft = cast<FloatType>(t.getElementType());
    llvm::APFloat inv(1.0 / double(s.microbatches));
    bool lost;
    inv.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
    Value scale = ConstantOp::create(b, v.getLoc(),
                                     DenseElementsAttr::get(t, inv));
    mean = MulOp::create(b, v.getLoc(), sum, scale);
  }
  stepMap.map(v, mean);
  auto it = s.receivers.find(v);
  if (it != s.receivers.end())
    for (auto [r, inMb] : it->second)
      if (!inMb)
        send(mean, r, channelOf(v, kStepContext));
}

/// The step's ops that action `a` runs, in order.
SmallVector<Operation *> RankEmitter::opsOf(const pl::Action &a) {
  SmallVector<Operation *> ops;
  for (Operation &op : s.step.getBody().front().without_terminator()) {
    const OpInfo &i = s.info[&op];
    if (i.stage != a.stage || i.phase == Phase::Step)
      continue;
    bool runs = a.kind == pl::ActionKind::F   ? i.phase == Phase::F
                : a.kind == pl::ActionKind::B ? i.phase == Phase::B
                : a.kind == pl::ActionKind::W
                    ? i.phase == Phase::W
                    : i.phase == Phase::B || i.phase == Phase::W;
    if (runs)
      ops.push_back(&op);
  }
  return ops;
}

/// Calls `fn` on every value `op` (or an op nested in it) reads.
static void forEachRead(Operation *op, function_ref<void(Value, Operation *)> fn) {
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      fn(v, nested);
  });
}

/// The function of `a`'s stage and kind, made on first use (no function
/// when the stage runs no op of that kind).
const Outlined &RankEmitter::outline(const pl::Action &a) {
  auto [it, fresh] = outlined.try_emplace({a.stage, a.kind});
  Outlined &o = it->second;
  if (!fresh)
    return o;
  SmallVector<Operation *> ops = opsOf(a);
  if (ops.empty())
    return o;
  Block &body = s.step.getBody().front();
  llvm::DenseSet<Operation *> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> freeOps; // operands before users
  llvm::SmallPtrSet<Operation *, 16> seen;
  std::function<void(Value, Operation *)> read = [&](Value v, Operation *user) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &body && inputs.insert(v))
        o.readers.push_back(user);
      return;
    }
    Operation *def = body.findAncestorOpInBlock(*v.getDefiningOp());
    if (!def || inside.contains(def) || def == body.findAncestorOpInBlock(*user))
      return;
    if (s.info[def].stage >= 0) {
      if (inputs.insert(v))
        o.readers.push_back(user);
      return;
    }
    if (!seen.insert(def).second)
      return;
    forEachRead(def, read);
    freeOps.insert(def);
  };
  for (Operation *op : ops)
    forEachRead(op, read);
  o.inputs = inputs.takeVector();
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) {
            return !inside.contains(body.findAncestorOpInBlock(*u));
          }))
        o.outputs.push_back(r);

  static const char *kinds[] = {"F", "B", "W", "BW"};
  std::string name = (func.getSymName() + "_stage" + Twine(a.stage) + "_" +
                      kinds[int(a.kind)])
                         .str();
  OpBuilder fb(b.getContext());
  fb.setInsertionPoint(func);
  auto type = fb.getFunctionType(ValueRange(o.inputs).getTypes(),
                                 ValueRange(o.outputs).getTypes());
  o.callee = func::FuncOp::create(fb, s.step.getLoc(), name, type);
  o.callee.setPrivate();
  o.callee->setAttr(TesselDialect::kSpmdAttrName,
                    func->getAttr(TesselDialect::kSpmdAttrName));
  Block *entry = o.callee.addEntryBlock();
  fb.setInsertionPointToEnd(entry);
  IRMapping m;
  m.map(o.inputs, entry->getArguments());
  for (Operation *op : freeOps)
    fb.clone(*op, m);
  for (Operation *op : ops)
    fb.clone(*op, m);
  SmallVector<Value> results;
  for (Value v : o.outputs)
    results.push_back(m.lookup(v));
  func::ReturnOp::create(fb, s.step.getLoc(), results);
  return o;
}

/// Action `index` of this rank: its receives, its mark, the call of its
/// stage and kind's function for its microbatch, then its sends.
LogicalResult RankEmitter::emitAction(const pl::Action &a, int64_t index) {
  // The action's region starts once what it receives has arrived: the
  // wait is the pipeline's bubble, not the action's time.
  auto region = RegionOp::create(b, s.step.getLoc(), index);
  const Outlined &o = outline(a);
  if (!o.callee)
    return success();
  received.clear();
  SmallVector<Value> args;
  for (auto [v, reader] : llvm::zip(o.inputs, o.readers)) {
    FailureOr<Value> local = lookup(v, a.microbatch, reader);
    if (failed(local))
      return failure();
    args.push_back(*local);
  }
  for (Operation *recv : received)
    recv->moveBefore(region);
  auto call = func::CallOp::create(b, s.step.getLoc(), o.callee, args);
  for (auto [v, local] : llvm::zip(o.outputs, call.getResults())) {
    mapFor(a.microbatch).map(v, local);
    defined(v, local, a.microbatch);
  }
  return success();
}

LogicalResult RankEmitter::emit() {
  makeFunction();
  Block &body = s.step.getBody().front();
  for (auto [k, a] : llvm::enumerate(s.schedule.actions[rank]))
    if (failed(emitAction(a, k)))
      return failure();
  RegionOp::create(b, s.step.getLoc(), s.schedule.actions[rank].size());
  for (Operation &op : body.without_terminator()) {
    const OpInfo &i = s.info[&op];
    if (i.phase == Phase::Step && i.stage >= 0 && i.stage % s.ranks == rank &&
        failed(emitOp(&op, kStepContext)))
      return failure();
  }
  SmallVector<Value> results;
  Operation *ret = body.getTerminator();
  for (unsigned k = 0; k < ret->getNumOperands(); ++k) {
    if (!llvm::is_contained(s.holders[k], rank))
      continue;
    FailureOr<Value> local = lookup(ret->getOperand(k), kStepContext, ret);
    if (failed(local))
      return failure();
    results.push_back(*local);
  }
  func::ReturnOp::create(b, ret->getLoc(), results);
  return success();
}

LogicalResult Splitter::emitRank(int64_t rank) {
  RankEmitter emitter(*this, rank);
  return emitter.emit();
}
