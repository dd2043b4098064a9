//===- OptimizeCollectives.cpp - --tessel-optimize-collectives ------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "tessel-optimize-collectives"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELOPTIMIZECOLLECTIVESPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

struct TesselOptimizeCollectivesPass
    : tessel::impl::TesselOptimizeCollectivesPassBase<
          TesselOptimizeCollectivesPass> {
  using TesselOptimizeCollectivesPassBase::TesselOptimizeCollectivesPassBase;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(TesselDialect::kSpmdAttrName) || func.isExternal())
        continue;
      dropSingleDeviceCollectives(func);
      foldBlocks(func);
      mergeSummedAllReduces(func);
      foldIdentityReshapes(func);
      hoist(func);
      bucket(func);
      removeDead(func);
    }
  }

  /// A collective over a group of one device (axes of size 1, such as a
  /// pipeline stage's "dp"=1) is its operand: all-reduce, all-gather,
  /// reduce-scatter, all-to-all and shard_slice leave a lone device's data
  /// as it is. Point-to-point ops and permutes (whose pairs say what a lone
  /// device does) stay.
  void dropSingleDeviceCollectives(func::FuncOp func) {
    SmallVector<Operation *> lone;
    func.walk([&](CollectiveOpInterface c) {
      Operation *op = c.getOperation();
      if (!isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
               ShardSliceOp>(op) ||
          op->getNumOperands() != 1 || op->getNumResults() != 1 ||
          op->getOperand(0).getType() != op->getResult(0).getType())
        return;
      MeshOp mesh = lookupMesh(op, c.getMeshAttr());
      if (!mesh)
        return;
      int64_t devices = 1;
      for (Attribute axis : c.getAxes())
        devices *= mesh.getAxisSize(cast<StringAttr>(axis).getValue());
      if (devices == 1)
        lone.push_back(op);
    });
    for (Operation *op : lone) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    }
  }

  /// all_gather + shard_slice of the same group and dimension -> the
  /// gather's operand; all_reduce + shard_slice -> reduce_scatter.
  void foldBlocks(func::FuncOp func) {
    SmallVector<ShardSliceOp> slices;
    func.walk([&](ShardSliceOp s) { slices.push_back(s); });
    for (ShardSliceOp s : slices) {
      Operation *def = s.getInput().getDefiningOp();
      auto sameGroup = [&](CollectiveOpInterface c) {
        return c.getMeshAttr() == s.getMeshAttr() && c.getAxes() == s.getAxes();
      };
      if (auto ag = dyn_cast_or_null<AllGatherOp>(def)) {
        if (sameGroup(ag) && ag.getDim() == s.getDim() &&
            ag.getInput().getType() == s.getType()) {
          s.getResult().replaceAllUsesWith(ag.getInput());
          s.erase();
        }
        continue;
      }
      auto ar = dyn_cast_or_null<AllReduceOp>(def);
      if (!ar || !ar->hasOneUse() || !sameGroup(ar))
        continue;
      OpBuilder b(s);
      Value rs = ReduceScatterOp::create(
          b, s.getLoc(), s.getType(), ar.getKind(), ar.getInput(),
          ar.getMeshAttr().getValue(), ar.getAxes(), s.getDim());
      s.getResult().replaceAllUsesWith(rs);
      s.erase();
      ar.erase();
    }
  }

  /// A sum of sum all-reduces of one group is the all-reduce of the sum:
  /// in a tree of adds (each used once, by the next), several such
  /// all-reduces become one. The global gradient norm under ZeRO-2 adds one
  /// partial square sum per sharded gradient, cut apart by the replicated
  /// ones'; this makes them one all-reduce instead of one per gradient.
  void mergeSummedAllReduces(func::FuncOp func) {
    SmallVector<AddOp> roots;
    func.walk([&](AddOp add) {
      if (!add->hasOneUse() || !isa<AddOp>(*add->user_begin()))
        roots.push_back(add);
    });
    for (AddOp root : roots)
      mergeInSum(root);
  }

  void mergeInSum(AddOp root) {
    // The tree's leaves, in order, and its adds.
    SmallVector<Value> leaves;
    SmallVector<Operation *> adds, stack = {root};
    while (!stack.empty()) {
      Operation *add = stack.pop_back_val();
      adds.push_back(add);
      for (Value v : llvm::reverse(add->getOperands())) {
        auto inner = v.getDefiningOp<AddOp>();
        if (inner && inner->hasOneUse() && v.getType() == root.getType())
          stack.push_back(inner);
        else
          leaves.push_back(v);
      }
    }
    using Key = std::pair<Attribute, Attribute>;
    llvm::MapVector<Key, SmallVector<AllReduceOp>> groups;
    for (Value v : leaves) {
      auto ar = v.getDefiningOp<AllReduceOp>();
      if (ar && ar.getKind() == CollectiveKind::sum && ar->hasOneUse())
        groups[{ar.getMeshAttr(), ar.getAxes()}].push_back(ar);
    }
    if (llvm::none_of(groups, [](auto &g) { return g.second.size() > 1; }))
      return;
    OpBuilder b(root);
    Location loc = root.getLoc();
    auto sum = [&](Value x, Value y) {
      auto add = AddOp::create(b, loc, x, y);
      add->setDiscardableAttrs(root->getDiscardableAttrDictionary());
      return add.getResult();
    };
    Value total;
    SmallVector<Operation *> merged;
    for (Value v : leaves) {
      auto ar = v.getDefiningOp<AllReduceOp>();
      auto group = ar ? groups.find({ar.getMeshAttr(), ar.getAxes()})
                      : groups.end();
      if (group != groups.end() && group->second.size() > 1) {
        if (ar != group->second.front())
          continue; // summed into the group's first
        Value inner;
        for (AllReduceOp m : group->second) {
          inner = inner ? sum(inner, m.getInput()) : m.getInput();
          merged.push_back(m);
        }
        v = AllReduceOp::create(b, loc, v.getType(), CollectiveKind::sum,
                                inner, ar.getMeshAttr().getValue(),
                                ar.getAxes());
      }
      total = total ? sum(total, v) : v;
    }
    root.getResult().replaceAllUsesWith(total);
    for (Operation *op : adds)
      op->erase();
    for (Operation *op : merged)
      op->erase();
  }

  /// A reshape to its operand's own type (autodiff's reshape of a
  /// gradient to its parameter's shape, where they already agree) is
  /// dropped where it reads a sum all-reduce: as a use of the all-reduce it
  /// would end the bucket at once (one bucket per gradient).
  void foldIdentityReshapes(func::FuncOp func) {
    SmallVector<ReshapeOp> identities;
    func.walk([&](ReshapeOp r) {
      if (r.getInput().getType() == r.getType() &&
          r.getInput().getDefiningOp<AllReduceOp>())
        identities.push_back(r);
    });
    for (ReshapeOp r : identities) {
      r.getResult().replaceAllUsesWith(r.getInput());
      r.erase();
    }
  }

  /// Moves each bucketable all-reduce up to just after its input's
  /// definition (the partitioner places it where its result is first
  /// needed: a gradient's in the optimizer update, which reads it at once).
  /// Every device runs the same program, so the collectives stay in one
  /// order on all of them; earlier is also where a GPU can overlap them.
  void hoist(func::FuncOp func) {
    mlir::Block &body = func.getBody().front();
    SmallVector<AllReduceOp> candidates;
    for (auto ar : body.getOps<AllReduceOp>())
      if (isBucketable(ar))
        candidates.push_back(ar);
    // Where the last all-reduce hoisted after a definition went, so that
    // several keep their order.
    llvm::DenseMap<Operation *, Operation *> lastAfter;
    for (AllReduceOp ar : candidates) {
      Operation *def = ar.getInput().getDefiningOp();
      if (def && def->getBlock() != &body)
        continue;
      Operation *&anchor = lastAfter[def];
      if (anchor)
        ar->moveAfter(anchor);
      else if (def)
        ar->moveAfter(def);
      else
        ar->moveBefore(&body.front());
      anchor = ar;
    }
  }

  int64_t sizeOf(AllReduceOp op) const {
    RankedTensorType t = typeOf(op.getInput());
    return t.getNumElements() *
           std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
  }

  bool isBucketable(AllReduceOp op) const {
    return op.getKind() == CollectiveKind::sum && sizeOf(op) <= bucketBytes;
  }

  /// Combines small sum all-reduces into buckets, one open bucket per
  /// group and element type, so that the tensor-parallel all-reduces of a
  /// backward do not cut its data-parallel gradient buckets apart. A bucket
  /// is combined when full, and when an op uses one of its members (the
  /// combined all-reduce sits at its last member, so every use must follow).
  void bucket(func::FuncOp func) {
    // Buckets are keyed by (mesh, axes, element type), in opening order.
    using Key = std::tuple<Attribute, Attribute, Type>;
    struct Bucket {
      Key key;
      SmallVector<AllReduceOp> members;
      int64_t bytes = 0;
    };
    SmallVector<Bucket> open;
    auto find = [&](const Key &key) {
      return llvm::find_if(open, [&](const Bucket &b) { return b.key == key; });
    };
    auto flush = [&](Bucket *b) {
      if (b->members.size() > 1)
        combine(b->members);
      open.erase(b);
    };
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      for (Value operand : op.getOperands()) {
        auto def = operand.getDefiningOp<AllReduceOp>();
        Bucket *b = llvm::find_if(open, [&](const Bucket &b) {
          return def && llvm::is_contained(b.members, def);
        });
        if (b != open.end())
          flush(b);
      }
      auto ar = dyn_cast<AllReduceOp>(op);
      if (!ar || !isBucketable(ar))
        continue;
      Key key{ar.getMeshAttr(), ar.getAxes(),
              typeOf(ar.getInput()).getElementType()};
      Bucket *b = find(key);
      if (b != open.end() && b->bytes + sizeOf(ar) > bucketBytes) {
        flush(b);
        b = open.end();
      }
      if (b == open.end())
        b = &open.emplace_back(Bucket{key, {}, 0});
      b->members.push_back(ar);
      b->bytes += sizeOf(ar);
    }
    while (!open.empty())
      flush(&open.front());
  }

  /// One all-reduce of the flattened, concatenated inputs, placed at the
  /// last member; results sliced back out.
  void combine(ArrayRef<AllReduceOp> members) {
    AllReduceOp last = members.back();
    OpBuilder b(last);
    Location loc = last.getLoc();
    Type elt = typeOf(last.getInput()).getElementType();
    SmallVector<Value> flat;
    int64_t total = 0;
    for (AllReduceOp m : members) {
      int64_t n = typeOf(m.getInput()).getNumElements();
      auto pieceType = RankedTensorType::get({n}, elt);
      Value in = m.getInput();
      flat.push_back(in.getType() == pieceType
                         ? in
                         : ReshapeOp::create(b, loc, pieceType, in).getResult());
      total += n;
    }
    auto flatType = RankedTensorType::get({total}, elt);
    Value joined = ConcatenateOp::create(b, loc, flat, int64_t(0));
    Value reduced = AllReduceOp::create(
        b, loc, flatType, CollectiveKind::sum, joined,
        last.getMeshAttr().getValue(), last.getAxes());
    int64_t offset = 0;
    for (AllReduceOp m : members) {
      RankedTensorType t = typeOf(m.getInput());
      int64_t n = t.getNumElements();
      Value piece = SliceOp::create(b, loc, reduced, ArrayRef<int64_t>{offset},
                                    ArrayRef<int64_t>{offset + n},
                                    ArrayRef<int64_t>{1});
      if (piece.getType() != t)
        piece = ReshapeOp::create(b, loc, t, piece);
      m.getResult().replaceAllUsesWith(piece);
      offset += n;
    }
    for (AllReduceOp m : members)
      m.erase();
  }

  /// Removes unused collectives and the side-effect-free ops left dead
  /// (index arithmetic of folded blocks). Every device runs the same
  /// program, so a collective no device uses can go from all of them.
  void removeDead(func::FuncOp func) {
    mlir::Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      auto collective = dyn_cast<CollectiveOpInterface>(op);
      bool unusedCollective = collective && !collective.isPointToPoint() &&
                              op.getNumResults() && op.use_empty();
      if (unusedCollective || isOpTriviallyDead(&op))
        op.erase();
    }
  }
};
} // namespace
