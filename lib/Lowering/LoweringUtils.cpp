//===- LoweringUtils.cpp - builders shared by the tessel lowerings --------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tessel::lowering;
namespace lowering = mlir::tessel::lowering;

Type lowering::computeType(Type elem) {
  if (auto f = dyn_cast<FloatType>(elem))
    if (f.getWidth() < 32)
      return Float32Type::get(elem.getContext());
  return elem;
}

/// fptosi is poison for NaN and out-of-range values (x86 gives INT_MIN);
/// tessel.convert, as the interpreter (floatToInt), saturates to the integer
/// type's range and takes NaN to 0.
static Value saturatingFPToSI(OpBuilder &b, Location loc, Value v,
                              IntegerType to) {
  Type from = v.getType();
  // -2^(w-1) and 2^(w-1) are powers of two: exact in every float type (or
  // infinite in f16, which then never reaches them).
  double bound = std::ldexp(1.0, to.getWidth() - 1);
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y).getResult();
  };
  auto select = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y).getResult();
  };
  Value raw = arith::FPToSIOp::create(b, loc, to, v);
  Value min = scalarConst(b, loc, to, -INFINITY),
        max = scalarConst(b, loc, to, INFINITY),
        zero = scalarConst(b, loc, to, 0.0);
  Value r = select(cmp(arith::CmpFPredicate::OGE, v,
                       scalarConst(b, loc, from, bound)),
                   max, raw);
  r = select(cmp(arith::CmpFPredicate::OLE, v,
                 scalarConst(b, loc, from, -bound)),
             min, r);
  return select(cmp(arith::CmpFPredicate::UNO, v, v), zero, r);
}

Value lowering::castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  unsigned fromW = from.getIntOrFloatBitWidth(),
           toW = to.getIntOrFloatBitWidth();
  if (fromF) {
    if (toW == 1)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   scalarConst(b, loc, from, 0.0));
    return saturatingFPToSI(b, loc, v, cast<IntegerType>(to));
  }
  if (toF)
    return fromW == 1 ? arith::UIToFPOp::create(b, loc, to, v).getResult()
                      : arith::SIToFPOp::create(b, loc, to, v).getResult();
  if (toW == 1)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 scalarConst(b, loc, from, 0.0));
  if (fromW < toW)
    return fromW == 1 ? arith::ExtUIOp::create(b, loc, to, v).getResult()
                      : arith::ExtSIOp::create(b, loc, to, v).getResult();
  return arith::TruncIOp::create(b, loc, to, v);
}

Value lowering::scalarConst(OpBuilder &b, Location loc, Type type,
                            double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  auto i = cast<IntegerType>(type);
  if (std::isinf(value)) {
    // The type's max (+inf) or min (-inf), as reductions need.
    APInt bound = value > 0 ? APInt::getSignedMaxValue(i.getWidth())
                            : APInt::getSignedMinValue(i.getWidth());
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i, bound));
  }
  int64_t v = static_cast<int64_t>(value);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i, v));
}

Value lowering::emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value lowering::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                             double value) {
  Value scalar = scalarConst(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

Value lowering::parallelGeneric(OpBuilder &b, Location loc,
                                RankedTensorType resultType, ValueRange inputs,
                                ArrayRef<AffineMap> maps, ScalarFn body) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> all(maps);
  all.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs,
      ValueRange{emptyTensor(b, loc, resultType)}, all, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value out = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, out);
      });
  return op.getResult(0);
}

Value lowering::elementwise(OpBuilder &b, Location loc,
                            RankedTensorType resultType, ValueRange inputs,
                            ScalarFn body) {
  SmallVector<AffineMap> maps(inputs.size(),
                              b.getMultiDimIdentityMap(resultType.getRank()));
  return parallelGeneric(b, loc, resultType, inputs, maps, body);
}

Value lowering::floatElementwise(OpBuilder &b, Location loc,
                                 RankedTensorType resultType, ValueRange inputs,
                                 ScalarFn body) {
  Type elem = resultType.getElementType();
  return elementwise(
      b, loc, resultType, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> wide;
        for (Value a : args)
          wide.push_back(isa<FloatType>(a.getType())
                             ? castScalar(nb, nloc, a, computeType(a.getType()))
                             : a);
        return castScalar(nb, nloc, body(nb, nloc, wide), elem);
      });
}

AffineMap lowering::dropDimsMap(MLIRContext *ctx, int64_t rank,
                                ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value lowering::reduceDims(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims,
    Type accType, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    function_ref<Value(OpBuilder &, Location, Value)> prepare) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(inType.getDimSize(d));
  auto accTensor = RankedTensorType::get(shape, accType);
  Value acc = filledTensor(b, loc, accTensor, init);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (int64_t d : dims)
    iterators[d] = utils::IteratorType::reduction;
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 dropDimsMap(b.getContext(), rank, dims)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{accTensor}, ValueRange{input}, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = prepare ? prepare(nb, nloc, args[0])
                          : castScalar(nb, nloc, args[0], accType);
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], x));
      });
  return op.getResult(0);
}

Value lowering::copyThroughMap(OpBuilder &b, Location loc,
                               RankedTensorType type, Value input,
                               AffineMap map) {
  return parallelGeneric(
      b, loc, type, {input}, {map},
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value lowering::permuteTensor(OpBuilder &b, Location loc, Value v,
                              ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  // result[i] = input[perm[i]]: input dimension perm[i] is loop i.
  SmallVector<AffineExpr> exprs(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    exprs[p] = b.getAffineDimExpr(i);
  return copyThroughMap(b, loc,
                        RankedTensorType::get(shape, type.getElementType()), v,
                        AffineMap::get(perm.size(), 0, exprs, b.getContext()));
}

Value lowering::reshapeTensor(OpBuilder &b, Location loc, Value value,
                              ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  auto target = RankedTensorType::get(shape, type.getElementType());
  int64_t n = type.getNumElements();
  // Through a 1-D tensor (or a rank-0 one when there is one element).
  Value flat = value;
  if (type.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n}, type.getElementType()), value, all);
  } else if (type.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), value,
        ArrayRef<ReassociationIndices>{});
  }
  if (shape.size() == 1)
    return flat;
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, target, flat,
                                           ArrayRef<ReassociationIndices>{});
  SmallVector<ReassociationIndices> all(1);
  for (size_t d = 0; d < shape.size(); ++d)
    all[0].push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, target, flat, all);
}

Value lowering::addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value lowering::maxScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value lowering::minScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MinimumFOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}
