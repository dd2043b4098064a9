//===- ExpandFloatConversions.cpp - bf16/f16 conversions as integer code --===//
//
// LLVM lowers a conversion to or from bf16/f16 to a call into the
// toolchain's runtime library (__truncsfbf2, __extendhfsf2, ...) when the
// target CPU has no instruction for it, and GCC 12's libgcc lacks some of
// them; where the CPU has one (AVX512-BF16's vcvtneps2bf16) it flushes
// denormals to zero. Either way the executable would depend on the machine.
// This pass rewrites every such conversion into integer arithmetic that
// rounds to nearest even, keeps infinities, denormals and NaN (quieted, its
// payload's top bits kept), bit for bit as the interpreter's DType.cpp does,
// on every CPU. Arithmetic on bf16/f16 is first widened to f32 by upstream
// passes (arith-emulate-unsupported-floats, math-extend-to-supported-types),
// so only conversions are left here.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

bool isNarrowFloat(Type t) {
  Type e = getElementTypeOrSelf(t);
  return e.isBF16() || e.isF16();
}

/// `type` with its element type replaced (scalars and vectors).
Type withElement(Type type, Type elem) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(elem);
  return elem;
}

/// Builds integer code over scalars or vectors of one shape.
struct Bits {
  OpBuilder &b;
  Location loc;
  Type shapeOf; // the value whose shape every operand has

  Type intType(unsigned width) const {
    return withElement(shapeOf, b.getIntegerType(width));
  }
  Value c(unsigned width, uint64_t v) const {
    Type t = intType(width);
    TypedAttr attr = b.getIntegerAttr(b.getIntegerType(width), v);
    if (auto shaped = dyn_cast<ShapedType>(t))
      attr = SplatElementsAttr::get(shaped, attr);
    return arith::ConstantOp::create(b, loc, attr);
  }
  Type withF32() const { return withElement(shapeOf, b.getF32Type()); }
  Value f32(float v) const {
    TypedAttr attr = b.getF32FloatAttr(v);
    if (auto shaped = dyn_cast<ShapedType>(withF32()))
      attr = SplatElementsAttr::get(shaped, attr);
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value bitcast(Value v, Type elem) const {
    return arith::BitcastOp::create(b, loc, withElement(shapeOf, elem), v);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value band(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value bor(Value x, Value y) const {
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value shl(Value x, Value y) const {
    return arith::ShLIOp::create(b, loc, x, y);
  }
  Value shr(Value x, Value y) const {
    return arith::ShRUIOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value trunc16(Value x) const {
    return arith::TruncIOp::create(b, loc, intType(16), x);
  }
  Value ext32(Value x) const {
    return arith::ExtUIOp::create(b, loc, intType(32), x);
  }
};

/// f32 -> bf16 bits (i16): round to nearest even, NaN quieted.
Value f32ToBF16(const Bits &k, Value x) {
  Value bits = k.bitcast(x, k.b.getI32Type());
  Value abs = k.band(bits, k.c(32, 0x7fffffff));
  Value isNan = k.cmp(arith::CmpIPredicate::ugt, abs, k.c(32, 0x7f800000));
  Value high = k.shr(bits, k.c(32, 16));
  Value lsb = k.band(high, k.c(32, 1));
  // The bias carries into the exponent exactly when rounding up must.
  Value rounded = k.shr(k.add(bits, k.add(k.c(32, 0x7fff), lsb)), k.c(32, 16));
  Value nan = k.bor(high, k.c(32, 0x40));
  return k.trunc16(k.select(isNan, nan, rounded));
}

/// f32 -> f16 bits (i16): round to nearest even, overflow to infinity,
/// denormals rounded, NaN quieted with its payload's top bits.
Value f32ToF16(const Bits &k, Value x) {
  using P = arith::CmpIPredicate;
  Value bits = k.bitcast(x, k.b.getI32Type());
  Value sign = k.band(k.shr(bits, k.c(32, 16)), k.c(32, 0x8000));
  Value abs = k.band(bits, k.c(32, 0x7fffffff));
  Value mant = k.band(abs, k.c(32, 0x7fffff));
  // NaN: quiet bit set, top payload bits kept.
  Value nan = k.bor(k.c(32, 0x7e00), k.shr(mant, k.c(32, 13)));
  // Normal: rebias the exponent (127 - 15), round the 13 dropped bits.
  Value rebiased = k.sub(abs, k.c(32, 0x38000000));
  Value lsb = k.band(k.shr(rebiased, k.c(32, 13)), k.c(32, 1));
  Value normal =
      k.shr(k.add(rebiased, k.add(k.c(32, 0xfff), lsb)), k.c(32, 13));
  // Denormal (or zero): the significand with its implicit bit, shifted by
  // 126 - exponent (at most 25, past which everything rounds to zero).
  Value exp = k.shr(abs, k.c(32, 23));
  Value full = k.bor(mant, k.c(32, 0x800000));
  Value shift = k.sub(k.c(32, 126), exp);
  shift = k.select(k.cmp(P::ugt, shift, k.c(32, 25)), k.c(32, 25), shift);
  Value kept = k.shr(full, shift);
  Value rest = k.band(full, k.sub(k.shl(k.c(32, 1), shift), k.c(32, 1)));
  Value half = k.shl(k.c(32, 1), k.sub(shift, k.c(32, 1)));
  Value tie = k.band(k.cmp(P::eq, rest, half),
                     k.cmp(P::ne, k.band(kept, k.c(32, 1)), k.c(32, 0)));
  Value up = k.bor(k.cmp(P::ugt, rest, half), tie);
  Value denormal = k.add(kept, k.ext32(up));
  // Pick by magnitude: below 2^-14 denormal, from 65520 on infinity.
  Value r = k.select(k.cmp(P::ult, abs, k.c(32, 0x38800000)), denormal, normal);
  r = k.select(k.cmp(P::uge, abs, k.c(32, 0x477ff000)), k.c(32, 0x7c00), r);
  r = k.select(k.cmp(P::ugt, abs, k.c(32, 0x7f800000)), nan, r);
  return k.trunc16(k.bor(sign, r));
}

/// bf16 bits (i16) -> f32.
Value bf16ToF32(const Bits &k, Value h) {
  Value bits = k.shl(k.ext32(h), k.c(32, 16));
  return k.bitcast(bits, k.b.getF32Type());
}

/// f16 bits (i16) -> f32, exactly; NaN quieted.
Value f16ToF32(const Bits &k, Value h) {
  using P = arith::CmpIPredicate;
  Value w = k.ext32(h);
  Value sign = k.shl(k.band(w, k.c(32, 0x8000)), k.c(32, 16));
  Value exp = k.band(k.shr(w, k.c(32, 10)), k.c(32, 0x1f));
  Value mant = k.band(w, k.c(32, 0x3ff));
  Value normal =
      k.bor(k.shl(k.add(exp, k.c(32, 112)), k.c(32, 23)), k.shl(mant, k.c(32, 13)));
  Value special = k.bor(k.c(32, 0x7f800000), k.shl(mant, k.c(32, 13)));
  Value quiet = k.select(k.cmp(P::ne, mant, k.c(32, 0)), k.c(32, 0x400000),
                         k.c(32, 0));
  special = k.bor(special, quiet);
  // Denormal: mant * 2^-24, exact in f32.
  Type f32 = k.withF32();
  Value asFloat = arith::UIToFPOp::create(k.b, k.loc, f32, mant);
  Value scaled = arith::MulFOp::create(k.b, k.loc, asFloat, k.f32(0x1p-24f));
  Value denormal = k.bitcast(scaled,
                             k.b.getI32Type());
  Value r = k.select(k.cmp(P::eq, exp, k.c(32, 0)), denormal, normal);
  r = k.select(k.cmp(P::eq, exp, k.c(32, 0x1f)), special, r);
  return k.bitcast(k.bor(sign, r), k.b.getF32Type());
}

/// f64 -> f32 rounded to odd: the nearest f32 toward zero, with the lowest
/// bit set when that was inexact. Rounding the result once more to bf16 or
/// f16 (8 or 11 bits, far fewer than f32's 24) then equals rounding the f64
/// once.
Value f64ToF32Odd(const Bits &k, Value x) {
  using P = arith::CmpIPredicate;
  Type f32 = k.withF32();
  Value r = arith::TruncFOp::create(k.b, k.loc, f32, x);
  Value back = arith::ExtFOp::create(k.b, k.loc, x.getType(), r);
  Value inexact =
      arith::CmpFOp::create(k.b, k.loc, arith::CmpFPredicate::ONE, back, x);
  Value absX = k.band(k.bitcast(x, k.b.getI64Type()), k.c(64, INT64_MAX));
  Value absBack = k.band(k.bitcast(back, k.b.getI64Type()), k.c(64, INT64_MAX));
  Value roundedAway = k.band(inexact, k.cmp(P::ugt, absBack, absX));
  Value bits = k.bitcast(r, k.b.getI32Type());
  bits = k.select(roundedAway, k.sub(bits, k.c(32, 1)), bits);
  bits = k.select(inexact, k.bor(bits, k.c(32, 1)), bits);
  return k.bitcast(bits, k.b.getF32Type());
}

struct TruncFPattern : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = getElementTypeOrSelf(op.getType());
    Type from = getElementTypeOrSelf(op.getIn().getType());
    if (!isNarrowFloat(to) || !(from.isF32() || from.isF64()) ||
        op.getRoundingmodeAttr())
      return failure();
    Bits k{rewriter, op.getLoc(), op.getType()};
    Value x = from.isF64() ? f64ToF32Odd(k, op.getIn()) : op.getIn();
    Value bits = to.isBF16() ? f32ToBF16(k, x) : f32ToF16(k, x);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

struct ExtFPattern : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!isNarrowFloat(from) || !(to.isF32() || to.isF64()))
      return failure();
    Bits k{rewriter, op.getLoc(), op.getType()};
    Value h = k.bitcast(op.getIn(), rewriter.getI16Type());
    Value f = from.isBF16() ? bf16ToF32(k, h) : f16ToF32(k, h);
    if (to.isF64())
      f = arith::ExtFOp::create(rewriter, op.getLoc(), op.getType(), f);
    rewriter.replaceOp(op, f);
    return success();
  }
};

/// Integers to bf16/f16 go through f64 (exact for 32-bit integers) and the
/// truncation above; bf16/f16 to integers through f32 (exact).
template <typename Op>
struct IntToNarrowPattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    if (!isNarrowFloat(op.getType()))
      return failure();
    Type f64 = withElement(op.getType(), rewriter.getF64Type());
    Value wide = Op::create(rewriter, op.getLoc(), f64, op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), wide);
    return success();
  }
};

template <typename Op>
struct NarrowToIntPattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    if (!isNarrowFloat(op.getIn().getType()))
      return failure();
    Type f32 = withElement(op.getIn().getType(), rewriter.getF32Type());
    Value wide = arith::ExtFOp::create(rewriter, op.getLoc(), f32, op.getIn());
    rewriter.replaceOpWithNewOp<Op>(op, op.getType(), wide);
    return success();
  }
};

struct ExpandFloatConversionsPass
    : PassWrapper<ExpandFloatConversionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandFloatConversionsPass)
  StringRef getArgument() const override {
    return "tessel-expand-float-conversions";
  }
  StringRef getDescription() const override {
    return "bf16/f16 conversions as integer code, on every CPU alike";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncFPattern, ExtFPattern,
                 IntToNarrowPattern<arith::SIToFPOp>,
                 IntToNarrowPattern<arith::UIToFPOp>,
                 NarrowToIntPattern<arith::FPToSIOp>,
                 NarrowToIntPattern<arith::FPToUIOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left would become a libcall: say which op, not a link error.
    WalkResult left = getOperation().walk([](Operation *op) {
      if (!isa<arith::TruncFOp, arith::ExtFOp, arith::SIToFPOp,
               arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp>(op))
        return WalkResult::advance();
      bool narrow = llvm::any_of(op->getOperandTypes(), isNarrowFloat) ||
                    llvm::any_of(op->getResultTypes(), isNarrowFloat);
      if (!narrow)
        return WalkResult::advance();
      op->emitOpError("converts bf16/f16 in a way the CPU backend cannot "
                      "expand portably");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createExpandFloatConversionsPass() {
  return std::make_unique<ExpandFloatConversionsPass>();
}
