//===- TesselToLinalg.cpp - element-wise ops, data movement, reductions ---===//
//
// Each tessel op becomes linalg.generic (or a tensor view op) on tensors.
// Element-wise ops, broadcasts and transposes are all parallel generics with
// projected or permuted maps, so linalg's element-wise fusion can merge whole
// chains into one loop nest with no buffer per op.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

/// The scalar computation of each element-wise op, on compute-type floats or
/// on integers.
Value unaryScalar(Operation *op, OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  bool isFloat = isa<FloatType>(t);
  auto one = [&] { return scalarConst(b, loc, t, 1.0); };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) -> Value {
        if (isFloat)
          return arith::NegFOp::create(b, loc, x);
        return arith::SubIOp::create(b, loc, scalarConst(b, loc, t, 0), x);
      })
      .Case([&](AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(b, loc, x);
        return math::AbsIOp::create(b, loc, x);
      })
      .Case([&](ReluOp) -> Value {
        Value zero = scalarConst(b, loc, t, 0);
        if (isFloat) // max(x, 0) keeping NaN, and -0 -> +0
          return arith::MaximumFOp::create(b, loc, x, zero);
        return arith::MaxSIOp::create(b, loc, x, zero);
      })
      .Case([&](ExpOp) { return math::ExpOp::create(b, loc, x); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, x); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, x); })
      .Case([&](RsqrtOp) { return math::RsqrtOp::create(b, loc, x); })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, x); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, x); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](LogisticOp) -> Value {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return arith::DivFOp::create(b, loc, one(),
                                     arith::AddFOp::create(b, loc, one(), e));
      })
      .Case([&](SiluOp) -> Value {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return arith::DivFOp::create(b, loc, x,
                                     arith::AddFOp::create(b, loc, one(), e));
      })
      .Case([&](GeluOp o) -> Value {
        Value half = scalarConst(b, loc, t, 0.5);
        Value inner;
        if (o.getApproximation() == GeluApproximation::tanh) {
          Value x3 = arith::MulFOp::create(b, loc, x,
                                           arith::MulFOp::create(b, loc, x, x));
          Value poly = arith::AddFOp::create(
              b, loc, x,
              arith::MulFOp::create(b, loc, scalarConst(b, loc, t, 0.044715),
                                    x3));
          inner = math::TanhOp::create(
              b, loc,
              arith::MulFOp::create(
                  b, loc, scalarConst(b, loc, t, std::sqrt(2.0 / M_PI)), poly));
        } else {
          inner = math::ErfOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, x,
                                    scalarConst(b, loc, t, M_SQRT1_2)));
        }
        return arith::MulFOp::create(
            b, loc, arith::MulFOp::create(b, loc, half, x),
            arith::AddFOp::create(b, loc, one(), inner));
      });
}

Value binaryScalar(Operation *op, OpBuilder &b, Location loc, Value x,
                   Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) { return addScalars(b, loc, x, y); })
      .Case([&](SubOp) -> Value {
        if (isFloat)
          return arith::SubFOp::create(b, loc, x, y);
        return arith::SubIOp::create(b, loc, x, y);
      })
      .Case([&](MulOp) -> Value {
        if (isFloat)
          return arith::MulFOp::create(b, loc, x, y);
        return arith::MulIOp::create(b, loc, x, y);
      })
      .Case([&](DivOp) -> Value {
        if (isFloat)
          return arith::DivFOp::create(b, loc, x, y);
        // Integer division by zero gives 0 (the interpreter's definition);
        // divide by 1 there to stay defined.
        Value zero = scalarConst(b, loc, y.getType(), 0);
        Value isZero =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
        Value safe = arith::SelectOp::create(
            b, loc, isZero, scalarConst(b, loc, y.getType(), 1), y);
        Value q = arith::DivSIOp::create(b, loc, x, safe);
        return arith::SelectOp::create(b, loc, isZero, zero, q);
      })
      .Case([&](MaxOp) { return maxScalars(b, loc, x, y); })
      .Case([&](MinOp) { return minScalars(b, loc, x, y); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, x, y); });
}

template <typename OpT> struct UnaryLowering : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    Operation *raw = op.getOperation();
    auto fn = [&](OpBuilder &b, Location loc, ValueRange args) {
      return unaryScalar(raw, b, loc, args[0]);
    };
    Value v =
        isa<FloatType>(type.getElementType())
            ? floatElementwise(rw, op.getLoc(), type, {raw->getOperand(0)}, fn)
            : elementwise(rw, op.getLoc(), type, {raw->getOperand(0)}, fn);
    rw.replaceOp(op, v);
    return success();
  }
};

template <typename OpT> struct BinaryLowering : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    Operation *raw = op.getOperation();
    auto fn = [&](OpBuilder &b, Location loc, ValueRange args) {
      return binaryScalar(raw, b, loc, args[0], args[1]);
    };
    ValueRange operands = raw->getOperands();
    Value v = isa<FloatType>(type.getElementType())
                  ? floatElementwise(rw, op.getLoc(), type, operands, fn)
                  : elementwise(rw, op.getLoc(), type, operands, fn);
    rw.replaceOp(op, v);
    return success();
  }
};

struct ConvertLowering : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    Type to = type.getElementType();
    rw.replaceOp(op,
                 elementwise(rw, op.getLoc(), type, {op.getInput()},
                             [&](OpBuilder &b, Location loc, ValueRange args) {
                               return castScalar(b, loc, args[0], to);
                             }));
    return success();
  }
};

struct CompareLowering : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rw) const override {
    CompareDirection dir = op.getDirection();
    auto body = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value x = args[0], y = args[1];
      if (isa<FloatType>(x.getType())) {
        x = castScalar(b, loc, x, computeType(x.getType()));
        y = castScalar(b, loc, y, computeType(y.getType()));
        arith::CmpFPredicate p = arith::CmpFPredicate::OEQ;
        switch (dir) {
        case CompareDirection::eq:
          p = arith::CmpFPredicate::OEQ;
          break;
        case CompareDirection::ne:
          p = arith::CmpFPredicate::UNE;
          break;
        case CompareDirection::lt:
          p = arith::CmpFPredicate::OLT;
          break;
        case CompareDirection::le:
          p = arith::CmpFPredicate::OLE;
          break;
        case CompareDirection::gt:
          p = arith::CmpFPredicate::OGT;
          break;
        case CompareDirection::ge:
          p = arith::CmpFPredicate::OGE;
          break;
        }
        return arith::CmpFOp::create(b, loc, p, x, y);
      }
      arith::CmpIPredicate p = arith::CmpIPredicate::eq;
      switch (dir) {
      case CompareDirection::eq:
        p = arith::CmpIPredicate::eq;
        break;
      case CompareDirection::ne:
        p = arith::CmpIPredicate::ne;
        break;
      case CompareDirection::lt:
        p = arith::CmpIPredicate::slt;
        break;
      case CompareDirection::le:
        p = arith::CmpIPredicate::sle;
        break;
      case CompareDirection::gt:
        p = arith::CmpIPredicate::sgt;
        break;
      case CompareDirection::ge:
        p = arith::CmpIPredicate::sge;
        break;
      }
      return arith::CmpIOp::create(b, loc, p, x, y);
    };
    rw.replaceOp(op, elementwise(rw, op.getLoc(), resultTensor(op),
                                 {op.getLhs(), op.getRhs()}, body));
    return success();
  }
};

struct SelectLowering : OpRewritePattern<SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SelectOp op,
                                PatternRewriter &rw) const override {
    rw.replaceOp(
        op,
        elementwise(rw, op.getLoc(), resultTensor(op),
                    {op.getPred(), op.getOnTrue(), op.getOnFalse()},
                    [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                      return arith::SelectOp::create(b, loc, args[0], args[1],
                                                     args[2]);
                    }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Creation and data movement
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rw) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return rw.notifyMatchFailure(op, "only dense constants are lowered");
    RankedTensorType type = resultTensor(op);
    if (dense.isSplat() && type.getNumElements() > 1) {
      // A fill, not a global the size of the tensor.
      TypedAttr scalar = dense.getSplatValue<TypedAttr>();
      Value v = arith::ConstantOp::create(rw, op.getLoc(), scalar);
      rw.replaceOp(op,
                   linalg::FillOp::create(rw, op.getLoc(), v,
                                          emptyTensor(rw, op.getLoc(), type))
                       .getResult(0));
      return success();
    }
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, type, dense);
    return success();
  }
};

struct IotaLowering : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IotaOp op, PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    int64_t dim = op.getDim();
    Type elem = type.getElementType();
    rw.replaceOp(op, parallelGeneric(
                         rw, op.getLoc(), type, {}, {},
                         [&](OpBuilder &b, Location loc, ValueRange) -> Value {
                           Value i = linalg::IndexOp::create(b, loc, dim);
                           Value i64 = arith::IndexCastOp::create(
                               b, loc, b.getI64Type(), i);
                           return castScalar(b, loc, i64, elem);
                         }));
    return success();
  }
};

struct BroadcastLowering : OpRewritePattern<BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastInDimOp op,
                                PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    SmallVector<AffineExpr> exprs;
    for (auto [d, to] : llvm::enumerate(op.getDims()))
      exprs.push_back(inType.getDimSize(d) == 1 && type.getDimSize(to) != 1
                          ? rw.getAffineConstantExpr(0)
                          : rw.getAffineDimExpr(to));
    AffineMap map = AffineMap::get(type.getRank(), 0, exprs, getContext());
    rw.replaceOp(op, copyThroughMap(rw, op.getLoc(), type, op.getInput(), map));
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rw) const override {
    rw.replaceOp(
        op, permuteTensor(rw, op.getLoc(), op.getInput(), op.getPermutation()));
    return success();
  }
};

struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rw) const override {
    rw.replaceOp(op, reshapeTensor(rw, op.getLoc(), op.getInput(),
                                   resultTensor(op).getShape()));
    return success();
  }
};

struct SliceLowering : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    rw.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
        op.getStart(), type.getShape(), op.getStrides());
    return success();
  }
};

struct ConcatenateLowering : OpRewritePattern<ConcatenateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatenateOp op,
                                PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    int64_t dim = op.getDim();
    Value acc = emptyTensor(rw, op.getLoc(), type);
    int64_t offset = 0;
    for (Value in : op.getInputs()) {
      auto inType = cast<RankedTensorType>(in.getType());
      SmallVector<int64_t> offsets(type.getRank(), 0),
          strides(type.getRank(), 1);
      offsets[dim] = offset;
      offset += inType.getDimSize(dim);
      // An empty operand inserts nothing (and its offset may be the end of
      // the dimension, which insert_slice refuses).
      if (inType.getNumElements() == 0)
        continue;
      acc = tensor::InsertSliceOp::create(
          rw, op.getLoc(), in, acc, ValueRange{}, ValueRange{}, ValueRange{},
          offsets, inType.getShape(), strides);
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

struct PadLowering : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    Value filled =
        filledTensor(rw, op.getLoc(), type, op.getValue().convertToDouble());
    if (inType.getNumElements() == 0) { // all padding
      rw.replaceOp(op, filled);
      return success();
    }
    SmallVector<int64_t> strides(type.getRank(), 1);
    rw.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getInput(), filled, ValueRange{}, ValueRange{}, ValueRange{},
        op.getLow(), inType.getShape(), strides);
    return success();
  }
};

struct ShardingConstraintLowering : OpRewritePattern<ShardingConstraintOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShardingConstraintOp op,
                                PatternRewriter &rw) const override {
    rw.replaceOp(op, op.getInput());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct ReduceLowering : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    Type acc = computeType(type.getElementType());
    Value r;
    switch (op.getKind()) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      r = reduceDims(rw, loc, op.getInput(), op.getDims(), acc, 0.0,
                     addScalars);
      break;
    case ReduceKind::max:
      r = reduceDims(rw, loc, op.getInput(), op.getDims(), acc, -INFINITY,
                     maxScalars);
      break;
    case ReduceKind::min:
      r = reduceDims(rw, loc, op.getInput(), op.getDims(), acc, INFINITY,
                     minScalars);
      break;
    }
    double count = 1;
    for (int64_t d : op.getDims())
      count *= inType.getDimSize(d);
    bool mean = op.getKind() == ReduceKind::mean;
    if (mean || acc != type.getElementType())
      r = elementwise(
          rw, loc, type, {r}, [&](OpBuilder &b, Location l, ValueRange args) {
            Value v = args[0];
            if (mean)
              v = arith::DivFOp::create(b, l, v, scalarConst(b, l, acc, count));
            return castScalar(b, l, v, type.getElementType());
          });
    rw.replaceOp(op, r);
    return success();
  }
};

} // namespace

void mlir::tessel::populateTesselToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<UnaryLowering<NegOp>, UnaryLowering<AbsOp>, UnaryLowering<ReluOp>,
           UnaryLowering<ExpOp>, UnaryLowering<LogOp>, UnaryLowering<SqrtOp>,
           UnaryLowering<RsqrtOp>, UnaryLowering<TanhOp>,
           UnaryLowering<LogisticOp>, UnaryLowering<SiluOp>,
           UnaryLowering<SinOp>, UnaryLowering<CosOp>, UnaryLowering<GeluOp>>(
          ctx);
  patterns
      .add<BinaryLowering<AddOp>, BinaryLowering<SubOp>, BinaryLowering<MulOp>,
           BinaryLowering<DivOp>, BinaryLowering<MaxOp>, BinaryLowering<MinOp>,
           BinaryLowering<PowOp>>(ctx);
  patterns
      .add<ConvertLowering, CompareLowering, SelectLowering, ConstantLowering,
           IotaLowering, BroadcastLowering, TransposeLowering, ReshapeLowering,
           SliceLowering, ConcatenateLowering, PadLowering,
           ShardingConstraintLowering, ReduceLowering>(ctx);
  populateTesselNNToLinalgPatterns(patterns);
}
