//===- RuntimeCalls.cpp - the CPU target: BLAS and libtessel_rt calls -----===//
//
// Calls are made on tensors: each operand becomes a contiguous buffer
// (bufferization.to_buffer, which one-shot bufferization resolves to the
// operand's buffer, or a copy when that buffer is a strided view), the result
// a fresh buffer wrapped back into a tensor with bufferization.to_tensor
// (restrict: nothing else aliases it). Buffers travel as 1-D memrefs, so one
// declaration serves every shape (runtime/Abi.h).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "RuntimeCalls.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/CommGroups.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/runtime/Abi.h"
#include "tessel/runtime/CustomCall.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::lowering;

namespace {

/// A 1-D dynamic memref of `elem`, the type every runtime buffer has.
MemRefType flatType(Type elem) {
  return MemRefType::get({ShapedType::kDynamic}, elem);
}

/// Views the identity-layout `memref` as memref<?xT>.
Value flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t n = type.getNumElements();
  auto flat = MemRefType::get({n}, type.getElementType());
  Value v = memref;
  if (type.getRank() == 0)
    v = memref::ExpandShapeOp::create(b, loc, flat, v,
                                      ArrayRef<ReassociationIndices>{});
  else if (type.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    v = memref::CollapseShapeOp::create(b, loc, flat, v, all);
  }
  return memref::CastOp::create(b, loc, flatType(type.getElementType()), v);
}

/// The tensor's contents as a flat buffer the callee only reads.
Value inputBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value m = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                              /*read_only=*/true);
  return flatten(b, loc, m);
}

/// A new buffer for a result; `tensorOf` wraps it after the call.
struct OutputBuffer {
  Value memref, flat;
  Value tensorOf(OpBuilder &b, Location loc, RankedTensorType type) const {
    return bufferization::ToTensorOp::create(b, loc, type, memref,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }
};

OutputBuffer outputBuffer(OpBuilder &b, Location loc, RankedTensorType type) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value m =
      memref::AllocOp::create(b, loc, memrefType, b.getI64IntegerAttr(64));
  return {m, flatten(b, loc, m)};
}

/// Declares `name` (external, private) in the module of `op` if missing.
FlatSymbolRefAttr declareRuntime(OpBuilder &b, Operation *op, StringRef name,
                                 TypeRange args, TypeRange results) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(module.getBody());
    auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(args, results));
    fn.setPrivate();
  }
  return FlatSymbolRefAttr::get(b.getContext(), name);
}

Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

} // namespace

Value mlir::tessel::lowering::callRuntime(OpBuilder &rw, Operation *anchor,
                                          StringRef name, ValueRange inputs,
                                          RankedTensorType resultType,
                                          ArrayRef<DenseElementsAttr> constants,
                                          ArrayRef<int64_t> scalars,
                                          bool resultIsLastInput) {
  Location loc = anchor->getLoc();
  auto module = anchor->getParentOfType<ModuleOp>();
  SmallVector<Type> runtimeArgs;
  for (Value v : inputs)
    runtimeArgs.push_back(
        flatType(cast<RankedTensorType>(v.getType()).getElementType()));
  bool freshResult = resultType && !resultIsLastInput;
  if (freshResult)
    runtimeArgs.push_back(flatType(resultType.getElementType()));
  for (DenseElementsAttr c : constants)
    runtimeArgs.push_back(flatType(c.getElementType()));
  runtimeArgs.append(scalars.size(), rw.getI64Type());
  FlatSymbolRefAttr callee = declareRuntime(rw, anchor, name, runtimeArgs, {});

  SmallVector<Type> results;
  if (resultType)
    results.push_back(resultType);
  FunctionType type = rw.getFunctionType(TypeRange(inputs), results);
  SmallVector<Attribute> constantAttrs(constants.begin(), constants.end());
  Attribute key = rw.getArrayAttr(
      {rw.getStringAttr(name), TypeAttr::get(type),
       rw.getArrayAttr(constantAttrs), rw.getDenseI64ArrayAttr(scalars)});
  func::FuncOp wrapper;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->getAttr(kRuntimeCallKey) == key) {
      wrapper = fn;
      break;
    }
  if (!wrapper) {
    OpBuilder::InsertionGuard g(rw);
    rw.setInsertionPointToEnd(module.getBody());
    wrapper = func::FuncOp::create(rw, loc, ("__tessel_call_" + name).str(),
                                   type);
    wrapper.setPrivate();
    wrapper->setAttr(kRuntimeCallKey, key);
    SymbolTable(module).insert(wrapper); // unique name
    Block *body = wrapper.addEntryBlock();
    rw.setInsertionPointToStart(body);
    SmallVector<Value> args;
    for (BlockArgument a : body->getArguments())
      args.push_back(inputBuffer(rw, loc, a));
    std::optional<OutputBuffer> out;
    if (freshResult) {
      out = outputBuffer(rw, loc, resultType);
      args.push_back(out->flat);
    }
    for (DenseElementsAttr c : constants)
      args.push_back(
          inputBuffer(rw, loc, arith::ConstantOp::create(rw, loc, c)));
    for (int64_t v : scalars)
      args.push_back(i64Const(rw, loc, v));
    func::CallOp::create(rw, loc, callee, TypeRange{}, args);
    SmallVector<Value> returned;
    if (out)
      returned.push_back(out->tensorOf(rw, loc, resultType));
    else if (resultType)
      returned.push_back(body->getArguments().back());
    func::ReturnOp::create(rw, loc, returned);
  }
  auto call = func::CallOp::create(rw, loc, wrapper, inputs);
  return resultType ? call.getResult(0) : Value();
}

namespace {

Value convertTensor(OpBuilder &b, Location loc, Value v, Type elem) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elem)
    return v;
  return elementwise(b, loc, RankedTensorType::get(type.getShape(), elem), {v},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return castScalar(nb, l, a[0], elem);
                     });
}

//===----------------------------------------------------------------------===//
// tessel.dot_general
//===----------------------------------------------------------------------===//

FailureOr<StringRef> typeSuffix(Type elem);

/// dot_general -> tessel_rt_gemm_<type>: f32 and f64 for every target;
/// bf16 and f16 kept where the target's library takes them (`widen` false),
/// else widened to f32 around the call.
struct DotGeneralLowering : OpRewritePattern<DotGeneralOp> {
  DotGeneralLowering(MLIRContext *context, bool widen)
      : OpRewritePattern(context), widen(widen) {}
  bool widen;
  LogicalResult matchAndRewrite(DotGeneralOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Type elem = type.getElementType();
    auto fElem = dyn_cast<FloatType>(elem);
    if (!fElem)
      return rw.notifyMatchFailure(op, "integer matmuls are not lowered");
    Type blasElem =
        fElem.getWidth() == 64 ? Type(rw.getF64Type()) : Type(rw.getF32Type());
    if (!widen && (fElem.isBF16() || fElem.isF16()))
      blasElem = fElem;
    auto freeDims = [](int64_t rank, ArrayRef<int64_t> batch,
                       ArrayRef<int64_t> contract) {
      SmallVector<int64_t> out;
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
          out.push_back(d);
      return out;
    };
    ArrayRef<int64_t> lb = op.getLhsBatchingDims(),
                      lc = op.getLhsContractingDims(),
                      rb = op.getRhsBatchingDims(),
                      rc = op.getRhsContractingDims();
    SmallVector<int64_t> lf = freeDims(lhsType.getRank(), lb, lc);
    SmallVector<int64_t> rf = freeDims(rhsType.getRank(), rb, rc);
    auto prod = [](RankedTensorType t, ArrayRef<int64_t> dims) {
      int64_t p = 1;
      for (int64_t d : dims)
        p *= t.getDimSize(d);
      return p;
    };
    int64_t batch = prod(lhsType, lb), m = prod(lhsType, lf),
            k = prod(lhsType, lc), n = prod(rhsType, rf);
    auto cat = [](ArrayRef<int64_t> a, ArrayRef<int64_t> b2,
                  ArrayRef<int64_t> c) {
      SmallVector<int64_t> out(a);
      out.append(b2.begin(), b2.end());
      out.append(c.begin(), c.end());
      return out;
    };
    auto isIdentity = [](ArrayRef<int64_t> p) {
      return llvm::equal(p, llvm::seq<int64_t>(0, p.size()));
    };
    // Prefer the operand's own layout, telling BLAS to transpose, over a
    // transposed copy.
    SmallVector<int64_t> lhsN = cat(lb, lf, lc), lhsT = cat(lb, lc, lf);
    SmallVector<int64_t> rhsN = cat(rb, rc, rf), rhsT = cat(rb, rf, rc);
    bool transA = !isIdentity(lhsN) && isIdentity(lhsT);
    bool transB = !isIdentity(rhsN) && isIdentity(rhsT);
    Value lhs = permuteTensor(rw, loc, op.getLhs(), transA ? lhsT : lhsN);
    Value rhs = permuteTensor(rw, loc, op.getRhs(), transB ? rhsT : rhsN);
    lhs = convertTensor(rw, loc, lhs, blasElem);
    rhs = convertTensor(rw, loc, rhs, blasElem);
    lhs = reshapeTensor(rw, loc, lhs,
                        transA ? SmallVector<int64_t>{batch, k, m}
                               : SmallVector<int64_t>{batch, m, k});
    rhs = reshapeTensor(rw, loc, rhs,
                        transB ? SmallVector<int64_t>{batch, n, k}
                               : SmallVector<int64_t>{batch, k, n});
    // The result's own shape ([batch..., m free dims..., n free dims...] is
    // row-major [batch, m, n]): the runtime takes flat buffers, and no
    // reshape between the call and a returned result keeps the call writing
    // straight into the caller's out-parameter (no copy).
    auto outType = RankedTensorType::get(type.getShape(), blasElem);
    std::string name =
        "tessel_rt_gemm_" + typeSuffix(blasElem).value_or("f32").str();
    Value result = callRuntime(rw, op, name, {lhs, rhs}, outType, {},
                               {batch, m, n, k, transA, transB});
    rw.replaceOp(op, convertTensor(rw, loc, result, elem));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

FailureOr<StringRef> typeSuffix(Type elem) {
  if (elem.isF32())
    return StringRef("f32");
  if (elem.isF64())
    return StringRef("f64");
  if (elem.isBF16())
    return StringRef("bf16");
  if (elem.isF16())
    return StringRef("f16");
  if (elem.isInteger(64))
    return StringRef("i64");
  if (elem.isInteger(32))
    return StringRef("i32");
  if (elem.isInteger(1))
    return StringRef("i1");
  return failure();
}

int64_t reduceCode(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::sum:
    return TESSEL_RT_SUM;
  case CollectiveKind::max:
    return TESSEL_RT_MAX;
  case CollectiveKind::min:
    return TESSEL_RT_MIN;
  }
  return TESSEL_RT_SUM;
}

/// The descriptor of runtime/Abi.h: [opcode, kind, group, rank, in shape,
/// out shape, params...].
DenseElementsAttr descriptor(Builder &b, int64_t opcode, int64_t kind,
                             int64_t group, RankedTensorType in,
                             RankedTensorType out, ArrayRef<int64_t> params) {
  SmallVector<int64_t> desc = {opcode, kind, group, in.getRank()};
  llvm::append_range(desc, in.getShape());
  llvm::append_range(desc, out.getShape());
  llvm::append_range(desc, params);
  auto type = RankedTensorType::get({int64_t(desc.size())}, b.getI64Type());
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(desc));
}

/// Emits tessel_rt_<call>_<type>(buffers..., descriptor): `input` (none for a
/// receive) and `type`, the result (none for a send).
LogicalResult emitCommunication(PatternRewriter &rw, Operation *op,
                                StringRef call, int64_t opcode, int64_t kind,
                                Value input, RankedTensorType type,
                                ArrayRef<int64_t> params) {
  FailureOr<int64_t> group = commGroupOf(op);
  if (failed(group))
    return failure();
  auto inType = input ? cast<RankedTensorType>(input.getType()) : type;
  auto outType = type ? type : inType;
  FailureOr<StringRef> suffix = typeSuffix(outType.getElementType());
  if (failed(suffix))
    return rw.notifyMatchFailure(op, "element type without a collective");
  DenseElementsAttr desc =
      descriptor(rw, opcode, kind, *group, inType, outType, params);
  SmallVector<Value> inputs;
  if (input)
    inputs.push_back(input);
  Value result = callRuntime(rw, op, ("tessel_rt_" + call + "_" + *suffix).str(),
                             inputs, type, {desc}, {});
  if (type)
    rw.replaceOp(op, result);
  else
    rw.eraseOp(op);
  return success();
}

/// Emits tessel_rt_collective_<type>(input, result, descriptor).
LogicalResult emitCollective(PatternRewriter &rw, Operation *op, int64_t opcode,
                             int64_t kind, ArrayRef<int64_t> params) {
  return emitCommunication(
      rw, op, "collective", opcode, kind, op->getOperand(0),
      cast<RankedTensorType>(op->getResult(0).getType()), params);
}

struct AllReduceLowering : OpRewritePattern<AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllReduceOp op,
                                PatternRewriter &rw) const override {
    return emitCollective(rw, op, TESSEL_RT_ALL_REDUCE,
                          reduceCode(op.getKind()), {0, 0, 0});
  }
};

struct AllGatherLowering : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllGatherOp op,
                                PatternRewriter &rw) const override {
    return emitCollective(rw, op, TESSEL_RT_ALL_GATHER, 0, {op.getDim(), 0, 0});
  }
};

struct ReduceScatterLowering : OpRewritePattern<ReduceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceScatterOp op,
                                PatternRewriter &rw) const override {
    return emitCollective(rw, op, TESSEL_RT_REDUCE_SCATTER,
                          reduceCode(op.getKind()), {op.getDim(), 0, 0});
  }
};

struct AllToAllLowering : OpRewritePattern<AllToAllOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllToAllOp op,
                                PatternRewriter &rw) const override {
    return emitCollective(rw, op, TESSEL_RT_ALL_TO_ALL, 0, {op.getSplitDim(), op.getConcatDim(), 0});
  }
};

struct CollectivePermuteLowering : OpRewritePattern<CollectivePermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CollectivePermuteOp op,
                                PatternRewriter &rw) const override {
    ArrayRef<int64_t> pairs = op.getPairs();
    SmallVector<int64_t> params = {0, 0, int64_t(pairs.size() / 2)};
    llvm::append_range(params, pairs);
    return emitCollective(rw, op, TESSEL_RT_COLLECTIVE_PERMUTE, 0,
                          params);
  }
};

struct SendLowering : OpRewritePattern<SendOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SendOp op,
                                PatternRewriter &rw) const override {
    return emitCommunication(rw, op, "send", TESSEL_RT_SEND, 0, op.getInput(),
                             RankedTensorType(),
                             {op.getTarget(), op.getChannel(), 0});
  }
};

struct RecvLowering : OpRewritePattern<RecvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RecvOp op,
                                PatternRewriter &rw) const override {
    return emitCommunication(rw, op, "recv", TESSEL_RT_RECV, 0, Value(),
                             cast<RankedTensorType>(op.getType()),
                             {op.getSource(), op.getChannel(), 0});
  }
};

/// The executing device's group index over a collective's axes (i64), from
/// tessel_rt_axis_index.
FailureOr<Value> emitAxisIndex(PatternRewriter &rw, Operation *op) {
  FailureOr<int64_t> group = commGroupOf(op);
  if (failed(group))
    return failure();
  Type i64 = rw.getI64Type();
  FlatSymbolRefAttr callee =
      declareRuntime(rw, op, "tessel_rt_axis_index", {i64}, {i64});
  Location loc = op->getLoc();
  return func::CallOp::create(rw, loc, callee, TypeRange{i64},
                              ValueRange{i64Const(rw, loc, *group)})
      .getResult(0);
}

struct AxisIndexLowering : OpRewritePattern<AxisIndexOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AxisIndexOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    FailureOr<Value> idx = emitAxisIndex(rw, op);
    if (failed(idx))
      return failure();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value scalar = castScalar(rw, loc, *idx, type.getElementType());
    rw.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, ValueRange{scalar});
    return success();
  }
};

/// shard_slice -> tensor.extract_slice at offset group index * block.
struct ShardSliceLowering : OpRewritePattern<ShardSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShardSliceOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    FailureOr<Value> idx = emitAxisIndex(rw, op);
    if (failed(idx))
      return failure();
    RankedTensorType type = op.getType();
    int64_t dim = op.getDim();
    Value block = i64Const(rw, loc, type.getDimSize(dim));
    Value offset = arith::IndexCastOp::create(
        rw, loc, rw.getIndexType(), arith::MulIOp::create(rw, loc, *idx, block));
    SmallVector<OpFoldResult> offsets(type.getRank(), rw.getIndexAttr(0)),
        sizes, strides(type.getRank(), rw.getIndexAttr(1));
    offsets[dim] = offset;
    for (int64_t d : type.getShape())
      sizes.push_back(rw.getIndexAttr(d));
    rw.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, op.getInput(),
                                                  offsets, sizes, strides);
    return success();
  }
};

/// tessel.region N -> tessel_rt_region(N): the runtime names it from the
/// entry's "regions" (its function's tessel.regions).
struct RegionLowering : OpRewritePattern<RegionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RegionOp op,
                                PatternRewriter &rw) const override {
    Type i64 = rw.getI64Type();
    FlatSymbolRefAttr callee =
        declareRuntime(rw, op, kRegionFunction, {i64}, {});
    func::CallOp::create(rw, op.getLoc(), callee, TypeRange{},
                         ValueRange{i64Const(rw, op.getLoc(), op.getIndex())});
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// tessel.custom_call
//===----------------------------------------------------------------------===//

namespace {

/// The element type code of tessel/runtime/CustomCall.h.
int64_t dtypeCode(Type elem) {
  if (elem.isF16())
    return TESSEL_DTYPE_F16;
  if (elem.isBF16())
    return TESSEL_DTYPE_BF16;
  if (elem.isF32())
    return TESSEL_DTYPE_F32;
  if (elem.isF64())
    return TESSEL_DTYPE_F64;
  if (elem.isInteger(1))
    return TESSEL_DTYPE_I1;
  return elem.isInteger(32) ? TESSEL_DTYPE_I32 : TESSEL_DTYPE_I64;
}

/// tessel_rt_custom_call's descriptor (tessel/runtime/Abi.h).
SmallVector<int64_t> customCallDescriptor(CustomCallOp op) {
  SmallVector<int64_t> desc = {int64_t(op.getInputs().size()),
                               int64_t(op.getNumResults())};
  SmallVector<Type> types(op.getInputs().getTypes());
  llvm::append_range(types, op.getResultTypes());
  for (Type t : types) {
    auto tensor = cast<RankedTensorType>(t);
    desc.push_back(dtypeCode(tensor.getElementType()));
    desc.push_back(tensor.getRank());
    llvm::append_range(desc, tensor.getShape());
  }
  for (StringRef text : {op.getKernel(), op.getConfig()}) {
    desc.push_back(text.size());
    for (char c : text)
      desc.push_back(c);
  }
  return desc;
}

/// custom_call -> a private function of tensors that stores its buffers'
/// addresses in an array and calls tessel_rt_custom_call (as callRuntime's
/// wrappers: bufferization sees a call reading its operands and returning
/// fresh tensors).
struct CustomCallLowering : OpRewritePattern<CustomCallOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CustomCallOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    Type i64 = rw.getI64Type();
    FlatSymbolRefAttr callee = declareRuntime(
        rw, op, "tessel_rt_custom_call", {flatType(i64), flatType(i64)}, {});
    func::FuncOp wrapper;
    {
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToEnd(module.getBody());
      wrapper = func::FuncOp::create(
          rw, loc, ("__tessel_custom_" + op.getKernel()).str(),
          rw.getFunctionType(op.getInputs().getTypes(), op.getResultTypes()));
      wrapper.setPrivate();
      SymbolTable(module).insert(wrapper);
      Block *body = wrapper.addEntryBlock();
      rw.setInsertionPointToStart(body);
      SmallVector<Value> buffers;
      for (BlockArgument a : body->getArguments()) {
        auto type = cast<RankedTensorType>(a.getType());
        buffers.push_back(bufferization::ToBufferOp::create(
            rw, loc, MemRefType::get(type.getShape(), type.getElementType()),
            a, /*read_only=*/true));
      }
      SmallVector<Value> outputs;
      for (Type t : op.getResultTypes()) {
        auto type = cast<RankedTensorType>(t);
        outputs.push_back(memref::AllocOp::create(
            rw, loc, MemRefType::get(type.getShape(), type.getElementType()),
            rw.getI64IntegerAttr(64)));
        buffers.push_back(outputs.back());
      }
      auto addresses = memref::AllocaOp::create(
          rw, loc, MemRefType::get({int64_t(buffers.size())}, i64));
      for (auto [k, buffer] : llvm::enumerate(buffers)) {
        Value index =
            memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, buffer);
        Value address = arith::IndexCastOp::create(rw, loc, i64, index);
        Value at = arith::ConstantIndexOp::create(rw, loc, k);
        memref::StoreOp::create(rw, loc, address, addresses, ValueRange{at});
      }
      auto desc = customCallDescriptor(op);
      auto descAttr = DenseElementsAttr::get(
          RankedTensorType::get({int64_t(desc.size())}, i64),
          ArrayRef<int64_t>(desc));
      Value descBuffer = inputBuffer(
          rw, loc, arith::ConstantOp::create(rw, loc, descAttr));
      func::CallOp::create(rw, loc, callee, TypeRange{},
                           ValueRange{flatten(rw, loc, addresses), descBuffer});
      SmallVector<Value> returned;
      for (auto [out, t] : llvm::zip(outputs, op.getResultTypes()))
        returned.push_back(bufferization::ToTensorOp::create(
            rw, loc, t, out, /*restrict=*/true, /*writable=*/true));
      func::ReturnOp::create(rw, loc, returned);
    }
    rw.replaceOpWithNewOp<func::CallOp>(op, wrapper, op.getInputs());
    return success();
  }
};

} // namespace

static void populateCommunicationPatterns(RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering, AllGatherLowering, ReduceScatterLowering,
               AllToAllLowering, CollectivePermuteLowering, SendLowering,
               RecvLowering, AxisIndexLowering, ShardSliceLowering,
               RegionLowering>(
      patterns.getContext());
}

void mlir::tessel::populateCpuDevicePatterns(RewritePatternSet &patterns) {
  patterns.add<DotGeneralLowering>(patterns.getContext(), /*widen=*/true);
  patterns.add<CustomCallLowering>(patterns.getContext());
  populateCommunicationPatterns(patterns);
}

void mlir::tessel::populateCudaDevicePatterns(RewritePatternSet &patterns) {
  patterns.add<DotGeneralLowering>(patterns.getContext(), /*widen=*/false);
  // The runtime runs the kernel's GPU entry (tessel_cuda_NAME).
  patterns.add<CustomCallLowering>(patterns.getContext());
  populateCommunicationPatterns(patterns);
}
