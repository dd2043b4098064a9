//===- ExtDialect.cpp - a dialect plugin whose op Tessel can shard --------===//
//
// The `ext` dialect (ExtOps.td) and its one op, ext.swiglu, defined outside
// Tessel and built only against an installed Tessel. The op implements
// Tessel's sharding-rule interface (so --tessel-propagate and
// --tessel-partition treat it like a built-in op) and its VJP interface (so
// --tessel-train-step differentiates it). The same library is also a pass
// plugin with `ext-lower-to-tessel`, which rewrites the op into tessel ops
// before the target's lowering:
//
//   tessel-compile model.mlir --load-dialect-plugin TesselExtDialect.so \
//       --load-pass-plugin TesselExtDialect.so \
//       --extend "before-lowering=ext-lower-to-tessel" -o model
//
//===----------------------------------------------------------------------===//

#include "tessel/Tessel.h"
#include "tessel/dialects/tessel/Emit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Pass/Pass.h"

#include "ExtDialect.h.inc"
#define GET_OP_CLASSES
#include "ExtOps.h.inc"

using namespace mlir;

#include "ExtDialect.cpp.inc"
#define GET_OP_CLASSES
#include "ExtOps.cpp.inc"

void ext::ExtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ExtOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ext.swiglu
//===----------------------------------------------------------------------===//

LogicalResult ext::SwiGluOp::verify() {
  auto x = getX().getType(), gate = getWGate().getType(),
       up = getWUp().getType(), out = getResult().getType();
  if (x.getRank() < 1 || gate.getRank() != 2 || gate != up)
    return emitOpError("wants x of shape [..., k] and two weights of one "
                       "shape [k, n]");
  if (!isa<FloatType>(x.getElementType()) ||
      x.getElementType() != gate.getElementType())
    return emitOpError("wants float tensors of one element type");
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(gate.getDimSize(1));
  if (x.getShape().back() != gate.getDimSize(0) ||
      out != x.clone(shape))
    return emitOpError("wants [..., k] x [k, n] -> [..., n]; the result must "
                       "be ")
           << x.clone(shape);
  return success();
}

/// ([..., k], [k, n], [k, n]) -> ([..., n]): the leading dimensions and n
/// pass through, k must be replicated.
tessel::OpShardingRuleAttr ext::SwiGluOp::getShardingRule() {
  tessel::ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> x = getX().getType().getShape();
  SmallVector<int64_t> lead = b.factors(x.drop_back());
  int64_t k = b.factor(x.back(), tessel::FactorKind::NeedReplication);
  int64_t n = b.factor(getWGate().getType().getDimSize(1));
  SmallVector<int64_t> xDims(lead), outDims(lead);
  xDims.push_back(k);
  outDims.push_back(n);
  b.operandOf(xDims);
  b.operandOf({k, n});
  b.operandOf({k, n});
  b.resultOf(outDims);
  return b.build();
}

namespace {
/// The two projections of `op`: x . w_gate and x . w_up.
std::pair<Value, Value> project(OpBuilder &b, ext::SwiGluOp op) {
  int64_t last = op.getX().getType().getRank() - 1;
  auto dot = [&](Value w) -> Value {
    return tessel::DotGeneralOp::create(b, op.getLoc(), op.getX(), w,
                                        ArrayRef<int64_t>{},
                                        ArrayRef<int64_t>{},
                                        ArrayRef<int64_t>{last},
                                        ArrayRef<int64_t>{0});
  };
  return {dot(op.getWGate()), dot(op.getWUp())};
}
} // namespace

/// With a = x.wg, b = x.wu, s = silu(a), y = s * b and cotangent g:
/// gb = g s, ga = g b silu'(a); dx = ga wg^T + gb wu^T, dwg = x^T ga,
/// dwu = x^T gb. The projections are recomputed from the operands.
LogicalResult ext::SwiGluOp::buildVjp(OpBuilder &builder,
                                      ArrayRef<Value> gs,
                                      SmallVectorImpl<Value> &out) {
  out.assign(3, Value());
  if (gs.empty() || !gs[0])
    return success();
  tessel::autodiff::Emit e{builder, getLoc()};
  auto [a, b] = project(builder, *this);
  Value g = gs[0];
  Value sig = tessel::LogisticOp::create(builder, getLoc(), a);
  Value one = e.splat(a, 1.0);
  Value silu = e.mul(a, sig);
  Value dsilu = e.mul(sig, e.add(one, e.mul(a, e.sub(one, sig))));
  Value gb = e.mul(g, silu), ga = e.mul(e.mul(g, b), dsilu);
  int64_t last = getX().getType().getRank() - 1;
  SmallVector<int64_t> lead =
      llvm::to_vector(llvm::seq<int64_t>(0, last));
  auto backToX = [&](Value gy, Value w) -> Value {
    return tessel::DotGeneralOp::create(builder, getLoc(), gy, w,
                                        ArrayRef<int64_t>{},
                                        ArrayRef<int64_t>{},
                                        ArrayRef<int64_t>{last},
                                        ArrayRef<int64_t>{1});
  };
  auto toWeight = [&](Value gy) -> Value {
    return tessel::DotGeneralOp::create(builder, getLoc(), getX(), gy,
                                        ArrayRef<int64_t>{},
                                        ArrayRef<int64_t>{}, lead, lead);
  };
  out[0] = e.add(backToX(ga, getWGate()), backToX(gb, getWUp()));
  out[1] = toWeight(ga);
  out[2] = toWeight(gb);
  return success();
}

//===----------------------------------------------------------------------===//
// ext-lower-to-tessel
//===----------------------------------------------------------------------===//

namespace {
struct LowerToTesselPass
    : PassWrapper<LowerToTesselPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToTesselPass)
  StringRef getArgument() const override { return "ext-lower-to-tessel"; }
  StringRef getDescription() const override {
    return "Rewrites ext.swiglu into tessel ops (run it before lowering; "
           "on a partitioned program it works on each device's shapes)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tessel::TesselDialect>();
  }
  void runOnOperation() override {
    getOperation().walk([](ext::SwiGluOp op) {
      OpBuilder b(op);
      auto [a, up] = project(b, op);
      Value silu = tessel::SiluOp::create(b, op.getLoc(), a);
      Value y = tessel::MulOp::create(b, op.getLoc(), silu, up);
      op.getResult().replaceAllUsesWith(y);
      op.erase();
    });
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Plugin entry points
//===----------------------------------------------------------------------===//

/// As a dialect plugin (--load-dialect-plugin): the ext dialect.
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TesselExtDialect", TESSEL_PLUGIN_VERSION,
          [](DialectRegistry *registry) {
            registry->insert<ext::ExtDialect, tessel::TesselDialect>();
          }};
}

/// As a pass plugin (--load-pass-plugin): ext-lower-to-tessel.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TesselExtDialect", TESSEL_PLUGIN_VERSION,
          [] { PassRegistration<LowerToTesselPass>(); }};
}
