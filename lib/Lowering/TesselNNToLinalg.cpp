//===- TesselNNToLinalg.cpp - softmax, norms, cross-entropy ---------------===//
//
// Composite ops become short sequences of reductions and parallel generics
// in the compute type (f32 for 16-bit floats): statistics are never kept in
// bf16.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::lowering;

namespace {

Value wide(OpBuilder &b, Location loc, Value v) {
  return castScalar(b, loc, v, computeType(v.getType()));
}

RankedTensorType withElement(RankedTensorType t, Type elem) {
  return RankedTensorType::get(t.getShape(), elem);
}

struct SoftmaxLowering : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    Type acc = computeType(type.getElementType());
    int64_t rank = type.getRank(), dim = op.getDim();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap drop = dropDimsMap(getContext(), rank, {dim});
    Value mx =
        reduceDims(rw, loc, op.getInput(), {dim}, acc, -INFINITY, maxScalars);
    Value e = parallelGeneric(
        rw, loc, withElement(type, acc), {op.getInput(), mx}, {id, drop},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, wide(b, l, a[0]), a[1]));
        });
    Value sum = reduceDims(rw, loc, e, {dim}, acc, 0.0, addScalars);
    // A row that is all -inf gives zeros, as in the interpreter.
    Value r = parallelGeneric(
        rw, loc, type, {e, sum, mx}, {id, drop, drop},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value q = arith::DivFOp::create(b, l, a[0], a[1]);
          Value empty =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[2],
                                    scalarConst(b, l, acc, -INFINITY));
          Value v = arith::SelectOp::create(b, l, empty,
                                            scalarConst(b, l, acc, 0.0), q);
          return castScalar(b, l, v, type.getElementType());
        });
    rw.replaceOp(op, r);
    return success();
  }
};

/// layer_norm and rms_norm over the last dimension.
template <typename OpT, bool centered>
struct NormLowering : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    Type acc = computeType(type.getElementType());
    int64_t rank = type.getRank(), last = rank - 1;
    double n = type.getDimSize(last);
    MLIRContext *ctx = rw.getContext();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimsMap(ctx, rank, {last});
    AffineMap col = AffineMap::get(rank, 0, rw.getAffineDimExpr(last), ctx);
    Value x = op.getInput();
    Value mean;
    if (centered) {
      Value sum = reduceDims(rw, loc, x, {last}, acc, 0.0, addScalars);
      mean = parallelGeneric(
          rw, loc, cast<RankedTensorType>(sum.getType()), {sum},
          {rw.getMultiDimIdentityMap(rank - 1)},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(b, l, a[0], scalarConst(b, l, acc, n));
          });
    }
    // Sum of squares (of deviations when centered), per row.
    SmallVector<Value> sqIn = {x};
    SmallVector<AffineMap> sqMaps = {id};
    if (centered) {
      sqIn.push_back(mean);
      sqMaps.push_back(row);
    }
    Value centeredX = x;
    if (centered)
      centeredX = parallelGeneric(
          rw, loc, withElement(type, acc), sqIn, sqMaps,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::SubFOp::create(b, l, wide(b, l, a[0]), a[1]);
          });
    Value ss = reduceDims(rw, loc, centeredX, {last}, acc, 0.0, addScalars,
                          [&](OpBuilder &b, Location l, Value v) -> Value {
                            Value w = wide(b, l, v);
                            return arith::MulFOp::create(b, l, w, w);
                          });
    double eps = op.getEpsilon().convertToDouble();
    SmallVector<Value> ins = {centeredX, ss, op.getScale()};
    SmallVector<AffineMap> maps = {id, row, col};
    if constexpr (centered) {
      ins.push_back(op.getBias());
      maps.push_back(col);
    }
    Value r = parallelGeneric(
        rw, loc, type, ins, maps,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var =
              arith::DivFOp::create(b, l, a[1], scalarConst(b, l, acc, n));
          Value inv = math::RsqrtOp::create(
              b, l,
              arith::AddFOp::create(b, l, var, scalarConst(b, l, acc, eps)));
          Value v = arith::MulFOp::create(
              b, l, arith::MulFOp::create(b, l, wide(b, l, a[0]), inv),
              wide(b, l, a[2]));
          if (centered)
            v = arith::AddFOp::create(b, l, v, wide(b, l, a[3]));
          return castScalar(b, l, v, type.getElementType());
        });
    rw.replaceOp(op, r);
    return success();
  }
};

struct CrossEntropyLowering : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto logitsType = cast<RankedTensorType>(op.getLogits().getType());
    Type elem = logitsType.getElementType();
    Type acc = computeType(elem);
    int64_t rank = logitsType.getRank(), last = rank - 1;
    int64_t classes = logitsType.getDimSize(last);
    int64_t ignore = op.getIgnoreIndex();
    MLIRContext *ctx = getContext();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimsMap(ctx, rank, {last});
    Value logits = op.getLogits(), labels = op.getLabels();
    Value mx = reduceDims(rw, loc, logits, {last}, acc, -INFINITY, maxScalars);
    auto perRow = cast<RankedTensorType>(mx.getType());
    // sum(exp(x - max)) and x[label], per position.
    Value e = parallelGeneric(
        rw, loc, withElement(logitsType, acc), {logits, mx}, {id, row},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, wide(b, l, a[0]), a[1]));
        });
    Value sum = reduceDims(rw, loc, e, {last}, acc, 0.0, addScalars);
    Value pickedInit = filledTensor(rw, loc, perRow, 0.0);
    SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
    it[last] = utils::IteratorType::reduction;
    Value picked =
        linalg::GenericOp::create(
            rw, loc, TypeRange{perRow}, ValueRange{logits, labels},
            ValueRange{pickedInit}, ArrayRef<AffineMap>{id, row, row}, it,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value c = arith::IndexCastOp::create(
                  b, l, b.getI64Type(), linalg::IndexOp::create(b, l, last));
              Value label = castScalar(b, l, a[1], b.getI64Type());
              Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                                c, label);
              Value v =
                  arith::SelectOp::create(b, l, hit, wide(b, l, a[0]), a[2]);
              linalg::YieldOp::create(b, l, v);
            })
            .getResult(0);
    // Per-position loss, 0 where the label is ignored or out of range.
    auto valid = [&](OpBuilder &b, Location l, Value label) -> Value {
      Value lab = castScalar(b, l, label, b.getI64Type());
      auto i64c = [&](int64_t v) {
        return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v));
      };
      Value ok1 = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, lab,
                                        i64c(ignore));
      Value ok2 =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, lab, i64c(0));
      Value ok3 = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, lab,
                                        i64c(classes));
      return arith::AndIOp::create(b, l, ok1,
                                   arith::AndIOp::create(b, l, ok2, ok3));
    };
    AffineMap rowId = rw.getMultiDimIdentityMap(rank - 1);
    Value loss = parallelGeneric(
        rw, loc, perRow, {sum, mx, picked, labels},
        {rowId, rowId, rowId, rowId},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value v = arith::SubFOp::create(
              b, l,
              arith::AddFOp::create(b, l, math::LogOp::create(b, l, a[0]),
                                    a[1]),
              a[2]);
          return arith::SelectOp::create(b, l, valid(b, l, a[3]), v,
                                         scalarConst(b, l, acc, 0.0));
        });
    RankedTensorType type = resultTensor(op);
    if (op.getReduction() == LossReduction::none) {
      rw.replaceOp(op, elementwise(rw, loc, type, {loss},
                                   [&](OpBuilder &b, Location l, ValueRange a) {
                                     return castScalar(b, l, a[0], elem);
                                   }));
      return success();
    }
    SmallVector<int64_t> allDims;
    for (int64_t d = 0; d < rank - 1; ++d)
      allDims.push_back(d);
    Value total = reduceDims(rw, loc, loss, allDims, acc, 0.0, addScalars);
    Value count =
        reduceDims(rw, loc, labels, allDims, acc, 0.0, addScalars,
                   [&](OpBuilder &b, Location l, Value label) -> Value {
                     return castScalar(b, l, valid(b, l, label), acc);
                   });
    bool mean = op.getReduction() == LossReduction::mean;
    rw.replaceOp(
        op, elementwise(rw, loc, type, {total, count},
                        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                          Value v = a[0];
                          if (mean) {
                            Value zero = scalarConst(b, l, acc, 0.0);
                            Value none = arith::CmpFOp::create(
                                b, l, arith::CmpFPredicate::OEQ, a[1], zero);
                            v = arith::SelectOp::create(
                                b, l, none, zero,
                                arith::DivFOp::create(b, l, a[0], a[1]));
                          }
                          return castScalar(b, l, v, elem);
                        }));
    return success();
  }
};

} // namespace

void mlir::tessel::populateTesselNNToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering, NormLowering<LayerNormOp, true>,
               NormLowering<RmsNormOp, false>, CrossEntropyLowering>(
      patterns.getContext());
  populateTesselIndexingToLinalgPatterns(patterns);
}
