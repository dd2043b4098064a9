//===- TesselIndexingToLinalg.cpp - gathers, scans, top_k, dropout ------===//
//
// Ops whose results depend on indices: gather reads the table with
// tensor.extract inside a generic; scatter_add and cumsum are sequential
// loops over tensors that one-shot bufferization turns into in-place
// updates; one_hot and dropout_mask compare or hash element indices; top_k
// is k ranked reductions.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::lowering;

namespace {

/// result[pre, idx..., post] = table[pre, indices[idx...], post], or 0 when
/// the index is out of range.
struct GatherLowering : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    auto tableType = cast<RankedTensorType>(op.getTable().getType());
    auto idxType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t axis = op.getAxis(), ri = idxType.getRank();
    int64_t size = tableType.getDimSize(axis);
    SmallVector<AffineExpr> idxExprs;
    for (int64_t d = 0; d < ri; ++d)
      idxExprs.push_back(rw.getAffineDimExpr(axis + d));
    AffineMap idxMap =
        AffineMap::get(type.getRank(), 0, idxExprs, getContext());
    Value table = op.getTable();
    Type elem = type.getElementType();
    rw.replaceOp(
        op, parallelGeneric(
                rw, loc, type, {op.getIndices()}, {idxMap},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value i = castScalar(b, l, a[0], b.getI64Type());
                  Value zero =
                      arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
                  Value hi = arith::ConstantOp::create(
                      b, l, b.getI64IntegerAttr(size - 1));
                  Value ok = arith::AndIOp::create(
                      b, l,
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i,
                                            zero),
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, i,
                                            hi));
                  Value clamped = arith::MinSIOp::create(
                      b, l, arith::MaxSIOp::create(b, l, i, zero), hi);
                  SmallVector<Value> at;
                  for (int64_t d = 0; d < axis; ++d)
                    at.push_back(linalg::IndexOp::create(b, l, d));
                  at.push_back(arith::IndexCastOp::create(
                      b, l, b.getIndexType(), clamped));
                  for (int64_t d = axis + 1; d < tableType.getRank(); ++d)
                    at.push_back(linalg::IndexOp::create(b, l, d - 1 + ri));
                  Value v = tensor::ExtractOp::create(b, l, table, at);
                  return arith::SelectOp::create(b, l, ok, v,
                                                 scalarConst(b, l, elem, 0.0));
                }));
    return success();
  }
};

/// Sequential accumulation: result = base; result[o, idx[c], i] +=
/// updates[o, c, i] over (o, c, i) in order, skipping out-of-range indices.
struct ScatterAddLowering : OpRewritePattern<ScatterAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterAddOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto baseType = cast<RankedTensorType>(op.getBase().getType());
    auto idxType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t axis = op.getAxis();
    int64_t outer = 1, inner = 1, size = baseType.getDimSize(axis);
    for (int64_t d = 0; d < axis; ++d)
      outer *= baseType.getDimSize(d);
    for (int64_t d = axis + 1; d < baseType.getRank(); ++d)
      inner *= baseType.getDimSize(d);
    int64_t count = idxType.getNumElements();
    Value base = reshapeTensor(rw, loc, op.getBase(), {outer, size, inner});
    Value idx = reshapeTensor(rw, loc, op.getIndices(), {count});
    Value upd = reshapeTensor(rw, loc, op.getUpdates(), {outer, count, inner});
    auto cidx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    // A copy of base to accumulate into (base itself may be live after).
    Value init =
        linalg::CopyOp::create(
            rw, loc, base,
            emptyTensor(rw, loc, cast<RankedTensorType>(base.getType())))
            .getResult(0);
    Type elem = baseType.getElementType();
    auto loopO = scf::ForOp::create(rw, loc, cidx(0), cidx(outer), cidx(1),
                                    ValueRange{init});
    rw.setInsertionPointToStart(loopO.getBody());
    auto loopC = scf::ForOp::create(rw, loc, cidx(0), cidx(count), cidx(1),
                                    ValueRange{loopO.getRegionIterArg(0)});
    rw.setInsertionPointToStart(loopC.getBody());
    Value c = loopC.getInductionVar(), o = loopO.getInductionVar();
    Value row = castScalar(rw, loc, tensor::ExtractOp::create(rw, loc, idx, c),
                           rw.getI64Type());
    Value ok = arith::AndIOp::create(
        rw, loc,
        arith::CmpIOp::create(
            rw, loc, arith::CmpIPredicate::sge, row,
            arith::ConstantOp::create(rw, loc, rw.getI64IntegerAttr(0))),
        arith::CmpIOp::create(
            rw, loc, arith::CmpIPredicate::slt, row,
            arith::ConstantOp::create(rw, loc, rw.getI64IntegerAttr(size))));
    auto ifOp = scf::IfOp::create(rw, loc, TypeRange{init.getType()}, ok,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value r = arith::IndexCastOp::create(rw, loc, rw.getIndexType(), row);
      auto loopI = scf::ForOp::create(rw, loc, cidx(0), cidx(inner), cidx(1),
                                      ValueRange{loopC.getRegionIterArg(0)});
      rw.setInsertionPointToStart(loopI.getBody());
      Value i = loopI.getInductionVar();
      Value acc = loopI.getRegionIterArg(0);
      Value cur = tensor::ExtractOp::create(rw, loc, acc, ValueRange{o, r, i});
      Value u = tensor::ExtractOp::create(rw, loc, upd, ValueRange{o, c, i});
      Value sum = castScalar(
          rw, loc,
          addScalars(rw, loc, castScalar(rw, loc, cur, computeType(elem)),
                     castScalar(rw, loc, u, computeType(elem))),
          elem);
      Value next =
          tensor::InsertOp::create(rw, loc, sum, acc, ValueRange{o, r, i});
      scf::YieldOp::create(rw, loc, next);
      rw.setInsertionPointAfter(loopI);
      scf::YieldOp::create(rw, loc, loopI.getResult(0));
      rw.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(rw, loc, loopC.getRegionIterArg(0));
    }
    rw.setInsertionPointAfter(ifOp);
    scf::YieldOp::create(rw, loc, ifOp.getResult(0));
    rw.setInsertionPointAfter(loopC);
    scf::YieldOp::create(rw, loc, loopC.getResult(0));
    rw.setInsertionPointAfter(loopO);
    rw.replaceOp(
        op, reshapeTensor(rw, loc, loopO.getResult(0), baseType.getShape()));
    return success();
  }
};

struct OneHotLowering : OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rw) const override {
    RankedTensorType type = resultTensor(op);
    int64_t rank = type.getRank();
    AffineMap map = dropDimsMap(getContext(), rank, {rank - 1});
    Type elem = type.getElementType();
    rw.replaceOp(op, parallelGeneric(
                         rw, op.getLoc(), type, {op.getIndices()}, {map},
                         [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value c = arith::IndexCastOp::create(
                               b, l, b.getI64Type(),
                               linalg::IndexOp::create(b, l, rank - 1));
                           Value hit = arith::CmpIOp::create(
                               b, l, arith::CmpIPredicate::eq, c,
                               castScalar(b, l, a[0], b.getI64Type()));
                           return castScalar(b, l, hit, elem);
                         }));
    return success();
  }
};

/// Inclusive prefix sum: a loop over the dimension adding slice k-1 to k,
/// in the compute type (16-bit floats are summed in f32 and rounded once
/// at the end, as the interpreter does).
struct CumsumLowering : OpRewritePattern<CumsumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumsumOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    int64_t dim = op.getDim(), rank = type.getRank(), n = type.getDimSize(dim);
    if (n == 0) {
      rw.replaceOp(op, op.getInput());
      return success();
    }
    Type elem = type.getElementType(), sumType = computeType(elem);
    auto accType = RankedTensorType::get(type.getShape(), sumType);
    auto convert = [&](Value v, RankedTensorType to) {
      return elementwise(rw, loc, to, {v},
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return castScalar(b, l, a[0],
                                             to.getElementType());
                         });
    };
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, sumType);
    // A copy (or a conversion) of the input to scan in place.
    Value init = sumType == elem
                     ? linalg::CopyOp::create(rw, loc, op.getInput(),
                                              emptyTensor(rw, loc, type))
                           .getResult(0)
                     : convert(op.getInput(), accType);
    auto cidx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    auto loop = scf::ForOp::create(rw, loc, cidx(1), cidx(n), cidx(1),
                                   ValueRange{init});
    rw.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar(), acc = loop.getRegionIterArg(0);
    Value prev = arith::SubIOp::create(rw, loc, k, cidx(1));
    // Slice `at` along `dim`: offsets, sizes, strides.
    auto slice = [&](Value at) {
      SmallVector<OpFoldResult> offsets(rank, rw.getIndexAttr(0)), sizes,
          strides(rank, rw.getIndexAttr(1));
      offsets[dim] = at;
      for (int64_t s : sliceShape)
        sizes.push_back(rw.getIndexAttr(s));
      return std::make_tuple(offsets, sizes, strides);
    };
    auto sliceAt = [&](Value at) -> Value {
      auto [offsets, sizes, strides] = slice(at);
      return tensor::ExtractSliceOp::create(rw, loc, sliceType, acc, offsets,
                                            sizes, strides);
    };
    Value sum = elementwise(rw, loc, sliceType, {sliceAt(prev), sliceAt(k)},
                            [](OpBuilder &b, Location l, ValueRange a) {
                              return addScalars(b, l, a[0], a[1]);
                            });
    auto [offsets, sizes, strides] = slice(k);
    Value next = tensor::InsertSliceOp::create(rw, loc, sum, acc, offsets,
                                               sizes, strides);
    scf::YieldOp::create(rw, loc, next);
    rw.setInsertionPointAfter(loop);
    Value scanned = loop.getResult(0);
    rw.replaceOp(op, sumType == elem ? scanned : convert(scanned, type));
    return success();
  }
};

/// top_k over the last dimension as k reductions: the j-th pick is the best
/// element ranked strictly below pick j-1, in the order "larger value first,
/// NaN largest, lower index first among equals" (the interpreter's).
struct TopKLowering : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopKOp op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto valType = cast<RankedTensorType>(op.getValues().getType());
    auto idxType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t rank = inType.getRank(), last = rank - 1, k = op.getK();
    Type elem = inType.getElementType(), acc = computeType(elem);
    Type i64 = rw.getI64Type();
    MLIRContext *ctx = getContext();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimsMap(ctx, rank, {last});
    SmallVector<int64_t> rowShape(inType.getShape().drop_back());
    auto rowVal = RankedTensorType::get(rowShape, acc);
    auto rowIdx = RankedTensorType::get(rowShape, i64);
    bool isFloat = isa<FloatType>(acc);
    // Whether (a, ia) ranks above (b, ib).
    auto better = [&](OpBuilder &b, Location l, Value a, Value ia, Value bv,
                      Value ib) -> Value {
      Value lowerIndex =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ia, ib);
      if (!isFloat) {
        Value gt =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a, bv);
        Value eq = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a, bv);
        return arith::OrIOp::create(
            b, l, gt, arith::AndIOp::create(b, l, eq, lowerIndex));
      }
      Value aNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a, a);
      Value bNan =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, bv, bv);
      Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a, bv);
      Value eq = arith::OrIOp::create(
          b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a, bv),
          arith::AndIOp::create(b, l, aNan, bNan));
      Value notBNan = arith::XOrIOp::create(
          b, l, bNan,
          arith::ConstantOp::create(b, l, b.getIntegerAttr(b.getI1Type(), 1)));
      Value nanWins = arith::AndIOp::create(b, l, aNan, notBNan);
      return arith::OrIOp::create(b, l, arith::OrIOp::create(b, l, nanWins, gt),
                                  arith::AndIOp::create(b, l, eq, lowerIndex));
    };
    Value values = emptyTensor(rw, loc, valType);
    Value indices = emptyTensor(rw, loc, idxType);
    Value prevVal, prevIdx;
    SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
    it[last] = utils::IteratorType::reduction;
    for (int64_t j = 0; j < k; ++j) {
      Value initVal = filledTensor(rw, loc, rowVal, 0.0);
      Value initIdx = filledTensor(rw, loc, rowIdx, -1.0);
      SmallVector<Value> ins = {op.getInput()};
      SmallVector<AffineMap> maps = {id};
      if (j > 0) {
        ins.append({prevVal, prevIdx});
        maps.append({row, row});
      }
      maps.append({row, row});
      auto pick = linalg::GenericOp::create(
          rw, loc, TypeRange{rowVal, rowIdx}, ins, ValueRange{initVal, initIdx},
          maps, it, [&](OpBuilder &b, Location l, ValueRange a) {
            Value x = castScalar(b, l, a[0], acc);
            Value c = arith::IndexCastOp::create(
                b, l, i64, linalg::IndexOp::create(b, l, last));
            Value bv = a[a.size() - 2], bi = a[a.size() - 1];
            Value none = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::slt, bi,
                arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
            Value take =
                arith::OrIOp::create(b, l, none, better(b, l, x, c, bv, bi));
            if (j > 0) // only below the previous pick
              take = arith::AndIOp::create(b, l, take,
                                           better(b, l, a[1], a[2], x, c));
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::SelectOp::create(b, l, take, x, bv),
                           arith::SelectOp::create(b, l, take, c, bi)});
          });
      prevVal = pick.getResult(0);
      prevIdx = pick.getResult(1);
      // Column j of the results.
      SmallVector<int64_t> colShape(rowShape);
      colShape.push_back(1);
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[last] = j;
      Value v =
          elementwise(rw, loc, RankedTensorType::get(rowShape, elem), {prevVal},
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        return castScalar(b, l, a[0], elem);
                      });
      Value i = elementwise(
          rw, loc, RankedTensorType::get(rowShape, idxType.getElementType()),
          {prevIdx}, [&](OpBuilder &b, Location l, ValueRange a) {
            return castScalar(b, l, a[0], idxType.getElementType());
          });
      values = tensor::InsertSliceOp::create(
          rw, loc, reshapeTensor(rw, loc, v, colShape), values, ValueRange{},
          ValueRange{}, ValueRange{}, offsets, colShape, strides);
      indices = tensor::InsertSliceOp::create(
          rw, loc, reshapeTensor(rw, loc, i, colShape), indices, ValueRange{},
          ValueRange{}, ValueRange{}, offsets, colShape, strides);
    }
    rw.replaceOp(op, {values, indices});
    return success();
  }
};

/// The interpreter's dropoutKeep: bits 40..63 of splitmix64(splitmix64(seed)
/// + k), k the element's row-major index in the global shape (the block's
/// offsets added to its coordinates), kept when bits / 2^24 >= rate; kept
/// elements are 1 / (1 - rate). The seed's mix is computed once, outside
/// the loops.
struct DropoutMaskLowering : OpRewritePattern<DropoutMaskOp> {
  using OpRewritePattern::OpRewritePattern;

  /// splitmix64 of `x` as arith ops.
  static Value splitmix(OpBuilder &b, Location l, Value x) {
    Type i64 = b.getI64Type();
    auto c = [&](uint64_t v) -> Value {
      return arith::ConstantOp::create(b, l, b.getIntegerAttr(i64, int64_t(v)));
    };
    auto mix = [&](Value v, uint64_t shift, uint64_t mul) -> Value {
      Value t = arith::XOrIOp::create(b, l, v,
                                      arith::ShRUIOp::create(b, l, v, c(shift)));
      return arith::MulIOp::create(b, l, t, c(mul));
    };
    x = arith::AddIOp::create(b, l, x, c(0x9E3779B97F4A7C15ull));
    x = mix(x, 30, 0xBF58476D1CE4E5B9ull);
    x = mix(x, 27, 0x94D049BB133111EBull);
    return arith::XOrIOp::create(b, l, x,
                                 arith::ShRUIOp::create(b, l, x, c(31)));
  }

  LogicalResult matchAndRewrite(DropoutMaskOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType type = resultTensor(op);
    double rate = op.getRate().convertToDouble();
    // keep <=> bits >= threshold, exactly (2^24 * rate is exact in double).
    int64_t threshold = int64_t(std::ceil(rate * double(1 << 24)));
    Type i64 = rw.getI64Type(), elem = type.getElementType();
    auto scalar = [&](Value t) {
      return castScalar(rw, loc,
                        tensor::ExtractOp::create(rw, loc, t, ValueRange{}),
                        i64);
    };
    Value key = splitmix(rw, loc, scalar(op.getSeed()));
    SmallVector<Value> offsets;
    for (Value offset : op.getOffsets())
      offsets.push_back(scalar(offset));
    ArrayRef<int64_t> global =
        op.getGlobalShape().value_or(type.getShape());
    int64_t rank = type.getRank();
    rw.replaceOp(
        op,
        parallelGeneric(
            rw, loc, type, {}, {},
            [&](OpBuilder &b, Location l, ValueRange) -> Value {
              auto c = [&](uint64_t v) -> Value {
                return arith::ConstantOp::create(
                    b, l, b.getIntegerAttr(i64, int64_t(v)));
              };
              Value k = c(0);
              for (int64_t d = 0; d < rank; ++d) {
                Value i = arith::IndexCastOp::create(
                    b, l, i64, linalg::IndexOp::create(b, l, d));
                if (!offsets.empty())
                  i = arith::AddIOp::create(b, l, i, offsets[d]);
                k = arith::AddIOp::create(
                    b, l, arith::MulIOp::create(b, l, k, c(global[d])), i);
              }
              Value x = splitmix(b, l, arith::AddIOp::create(b, l, key, k));
              Value bits = arith::ShRUIOp::create(b, l, x, c(40));
              Value keep = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::uge, bits, c(threshold));
              return arith::SelectOp::create(
                  b, l, keep, scalarConst(b, l, elem, 1.0 / (1.0 - rate)),
                  scalarConst(b, l, elem, 0.0));
            }));
    return success();
  }
};

} // namespace

void mlir::tessel::populateTesselIndexingToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<GatherLowering, ScatterAddLowering, OneHotLowering,
               CumsumLowering, DropoutMaskLowering, TopKLowering>(
      patterns.getContext());
}
