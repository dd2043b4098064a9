//===- Interpreter.cpp - evaluate tessel ops on host tensors --------------===//

#include "tessel/interpreter/Interpreter.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/interpreter/Communicator.h"
#include "tessel/interpreter/Kernels.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace ::tessel;
using namespace ::tessel::interp;
namespace ti = ::tessel::interp;
using ::tessel::kernels::Reduction;


namespace {

using TensorRef = std::shared_ptr<const HostTensor>;

/// "file:line:col: 'tessel.x' op: message".
llvm::Error opError(Operation *op, const Twine &message) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  else
    os << op->getLoc() << ": ";
  os << "error: '" << op->getName() << "' op " << message;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), os.str());
}

std::vector<std::string> axesOf(ArrayAttr axes) {
  std::vector<std::string> out;
  for (Attribute a : axes)
    out.push_back(cast<StringAttr>(a).getValue().str());
  return out;
}

Reduction reductionOf(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::sum: return Reduction::Sum;
  case CollectiveKind::max: return Reduction::Max;
  case CollectiveKind::min: return Reduction::Min;
  }
  return Reduction::Sum;
}

class Evaluator {
public:
  explicit Evaluator(const RankContext *rank) : rank(rank) {}

  llvm::Expected<std::vector<HostTensor>> call(func::FuncOp func,
                                               std::vector<TensorRef> args);

private:
  llvm::Error eval(Operation *op);
  llvm::Expected<HostTensor> evalTessel(Operation *op);
  llvm::Expected<HostTensor> evalElementwise(Operation *op);
  llvm::Expected<HostTensor> evalUnary(Operation *op);
  llvm::Expected<HostTensor> evalCollective(Operation *op);
  const HostTensor &in(Value v) { return *values.lookup(v); }
  void set(Value v, HostTensor t) {
    values[v] = std::make_shared<const HostTensor>(std::move(t));
  }
  /// The group a communicating op runs in, as world ranks, and this
  /// rank's index in it.
  struct Members {
    std::vector<int64_t> ranks;
    int64_t index;
  };
  llvm::Expected<Members> membersOf(Operation *op) {
    auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    if (!meshRef || !op->getAttrOfType<ArrayAttr>("axes"))
      return opError(op, "the interpreter does not support this op");
    auto it = rank->meshes->find(meshRef.getValue().str());
    if (it == rank->meshes->end())
      return opError(op, "refers to an unknown mesh " +
                             meshRef.getValue().str());
    const MeshPlacement &mesh = it->second;
    int64_t position = mesh.positionOf(rank->rank);
    if (position < 0)
      return opError(op, "runs on rank " + std::to_string(rank->rank) +
                             ", which has no position on mesh @" +
                             meshRef.getValue().str());
    auto axes = axesOf(op->getAttrOfType<ArrayAttr>("axes"));
    Members m{mesh.shape.group(position, axes),
              mesh.shape.groupIndex(position, axes)};
    for (int64_t &r : m.ranks)
      r = mesh.ranks[r];
    return m;
  }

  llvm::Error needRank(Operation *op) {
    if (rank && rank->comm)
      return llvm::Error::success();
    return opError(op, "a collective needs the function to run as SPMD ranks "
                       "(mark it `tessel.spmd = @mesh`)");
  }

  const RankContext *rank;
  llvm::DenseMap<Value, TensorRef> values;
  std::vector<TensorRef> returned;
  int depth = 0;
};

llvm::Expected<std::vector<HostTensor>>
Evaluator::call(func::FuncOp func, std::vector<TensorRef> args) {
  if (func.isExternal())
    return opError(func, "cannot run a function declaration");
  if (++depth > 64)
    return opError(func, "call depth exceeds 64 (recursion?)");
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return opError(func, "expects " + Twine(body.getNumArguments()) +
                             " arguments, got " + Twine(args.size()));
  for (auto [arg, value] : llvm::zip(body.getArguments(), args))
    values[arg] = value;
  for (Operation &op : body)
    if (llvm::Error err = eval(&op))
      return std::move(err);
  std::vector<HostTensor> results;
  for (const TensorRef &r : returned)
    results.push_back(*r);
  --depth;
  return results;
}

llvm::Error Evaluator::eval(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    returned.clear();
    for (Value v : ret.getOperands())
      returned.push_back(values.lookup(v));
    return llvm::Error::success();
  }
  if (auto callOp = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, callOp.getCalleeAttr());
    if (!callee)
      return opError(op, "unknown callee");
    std::vector<TensorRef> args;
    for (Value v : callOp.getOperands())
      args.push_back(values.lookup(v));
    Evaluator inner(rank);
    inner.depth = depth;
    llvm::Expected<std::vector<HostTensor>> results =
        inner.call(callee, std::move(args));
    if (!results)
      return results.takeError();
    for (auto [res, value] : llvm::zip(callOp.getResults(), *results))
      set(res, std::move(value));
    return llvm::Error::success();
  }
  if (auto topk = dyn_cast<TopKOp>(op)) {
    auto [v, i] = kernels::topK(in(topk.getInput()), topk.getK());
    auto itype = cast<RankedTensorType>(topk.getIndices().getType());
    llvm::Expected<DType> idt = dtypeOf(itype);
    if (!idt)
      return idt.takeError();
    set(topk.getValues(), std::move(v));
    set(topk.getIndices(), kernels::convert(i, *idt));
    return llvm::Error::success();
  }
  if (auto cc = dyn_cast<CustomCallOp>(op)) {
    std::vector<const HostTensor *> inputs;
    for (Value v : cc.getInputs())
      inputs.push_back(&in(v));
    std::vector<std::pair<DType, Shape>> outputs;
    for (Type t : cc.getResultTypes()) {
      llvm::Expected<DType> dt = dtypeOf(t);
      if (!dt)
        return dt.takeError();
      auto shape = cast<RankedTensorType>(t).getShape();
      outputs.emplace_back(*dt, Shape(shape.begin(), shape.end()));
    }
    auto results = kernels::customCall(cc.getKernel(), inputs, outputs,
                                       cc.getConfig());
    if (!results)
      return opError(op, llvm::toString(results.takeError()));
    for (auto [res, value] : llvm::zip(cc.getResults(), *results))
      set(res, std::move(value));
    return llvm::Error::success();
  }
  if (isa<RegionOp>(op)) // timing only: nothing to compute
    return llvm::Error::success();
  if (auto send = dyn_cast<SendOp>(op)) {
    if (llvm::Error err = needRank(op))
      return err;
    llvm::Expected<Members> group = membersOf(op);
    if (!group)
      return group.takeError();
    rank->comm->send(send.getChannel(), rank->rank,
                     group->ranks[send.getTarget()], in(send.getInput()));
    return llvm::Error::success();
  }
  if (op->getDialect() && isa<TesselDialect>(op->getDialect())) {
    if (op->getNumResults() != 1)
      return opError(op, "the interpreter does not support this op");
    llvm::Expected<HostTensor> result = evalTessel(op);
    if (!result)
      return result.takeError();
    set(op->getResult(0), std::move(*result));
    return llvm::Error::success();
  }
  if (isa<MeshOp>(op))
    return llvm::Error::success();
  return opError(op, "the interpreter does not support this op");
}

llvm::Expected<HostTensor> Evaluator::evalTessel(Operation *op) {
  Type resultType = op->getResult(0).getType();
  llvm::Expected<DType> dt = dtypeOf(resultType);
  if (!dt)
    return dt.takeError();
  auto shape = cast<RankedTensorType>(resultType).getShape();
  using namespace kernels;
  return llvm::TypeSwitch<Operation *, llvm::Expected<HostTensor>>(op)
      .Case([&](ConstantOp c) -> llvm::Expected<HostTensor> {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense)
          return opError(op, "only dense constants are supported");
        HostTensor t(*dt, shape);
        int64_t k = 0;
        if (t.isFloat()) {
          for (APFloat v : dense.getValues<APFloat>()) {
            bool lost;
            v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                      &lost);
            t.f[k++] = v.convertToDouble();
          }
        } else {
          for (APInt v : dense.getValues<APInt>())
            t.i[k++] = *dt == DType::I1 ? int64_t(v.getZExtValue())
                                        : v.getSExtValue();
        }
        return t;
      })
      .Case([&](IotaOp o) { return iota(*dt, shape, o.getDim()); })
      .Case([&](ShardingConstraintOp o) { return in(o.getInput()); })
      .Case([&](BroadcastInDimOp o) {
        return broadcastInDim(in(o.getInput()), shape, o.getDims());
      })
      .Case([&](ReshapeOp o) { return reshape(in(o.getInput()), shape); })
      .Case([&](TransposeOp o) {
        return transpose(in(o.getInput()), o.getPermutation());
      })
      .Case([&](SliceOp o) {
        return slice(in(o.getInput()), o.getStart(), o.getLimit(),
                     o.getStrides());
      })
      .Case([&](ConcatenateOp o) {
        std::vector<const HostTensor *> xs;
        for (Value v : o.getInputs())
          xs.push_back(&in(v));
        return concatenate(xs, o.getDim());
      })
      .Case([&](PadOp o) {
        return pad(in(o.getInput()), o.getLow(), o.getHigh(),
                   o.getValue().convertToDouble());
      })
      .Case([&](DotGeneralOp o) {
        return dotGeneral(in(o.getLhs()), in(o.getRhs()),
                          o.getLhsBatchingDims(), o.getRhsBatchingDims(),
                          o.getLhsContractingDims(),
                          o.getRhsContractingDims());
      })
      .Case([&](ReduceOp o) {
        Reduction kind = Reduction::Sum;
        switch (o.getKind()) {
        case ReduceKind::sum: kind = Reduction::Sum; break;
        case ReduceKind::max: kind = Reduction::Max; break;
        case ReduceKind::min: kind = Reduction::Min; break;
        case ReduceKind::mean: kind = Reduction::Mean; break;
        }
        return reduce(in(o.getInput()), o.getDims(), kind);
      })
      .Case([&](CumsumOp o) { return cumsum(in(o.getInput()), o.getDim()); })
      .Case([&](SoftmaxOp o) { return softmax(in(o.getInput()), o.getDim()); })
      .Case([&](LayerNormOp o) {
        return layerNorm(in(o.getInput()), in(o.getScale()), &in(o.getBias()),
                         o.getEpsilon().convertToDouble());
      })
      .Case([&](RmsNormOp o) {
        return rmsNorm(in(o.getInput()), in(o.getScale()),
                       o.getEpsilon().convertToDouble());
      })
      .Case([&](GatherOp o) {
        return gather(in(o.getTable()), in(o.getIndices()), o.getAxis());
      })
      .Case([&](ScatterAddOp o) {
        return scatterAdd(in(o.getBase()), in(o.getIndices()),
                          in(o.getUpdates()), o.getAxis());
      })
      .Case([&](OneHotOp o) {
        return oneHot(in(o.getIndices()), *dt, shape.back());
      })
      .Case([&](DropoutMaskOp o) {
        SmallVector<int64_t> offsets;
        for (Value offset : o.getOffsets())
          offsets.push_back(in(offset).i[0]);
        return dropoutMask(in(o.getSeed()).i[0], *dt, shape,
                           o.getRate().convertToDouble(), offsets,
                           o.getGlobalShape().value_or(ArrayRef<int64_t>{}));
      })
      .Case([&](SoftmaxCrossEntropyOp o) {
        return softmaxCrossEntropy(in(o.getLogits()), in(o.getLabels()),
                                   o.getIgnoreIndex(),
                                   static_cast<int>(o.getReduction()));
      })
      .Default([&](Operation *) { return evalElementwise(op); });
}

/// Element-wise ops: binary, convert, compare and select.
llvm::Expected<HostTensor> Evaluator::evalElementwise(Operation *op) {
  Type resultType = op->getResult(0).getType();
  llvm::Expected<DType> dt = dtypeOf(resultType);
  if (!dt)
    return dt.takeError();
  using namespace kernels;
  return llvm::TypeSwitch<Operation *, llvm::Expected<HostTensor>>(op)
      .Case([&](ConvertOp o) { return convert(in(o.getInput()), *dt); })
      .Case([&](AddOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat()
                   ? zipFloat(x, y, [](double a, double b) { return a + b; })
                   : zipInt(x, y, [](int64_t a, int64_t b) {
                       return int64_t(uint64_t(a) + uint64_t(b));
                     });
      })
      .Case([&](SubOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat()
                   ? zipFloat(x, y, [](double a, double b) { return a - b; })
                   : zipInt(x, y, [](int64_t a, int64_t b) {
                       return int64_t(uint64_t(a) - uint64_t(b));
                     });
      })
      .Case([&](MulOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat()
                   ? zipFloat(x, y, [](double a, double b) { return a * b; })
                   : zipInt(x, y, [](int64_t a, int64_t b) {
                       return int64_t(uint64_t(a) * uint64_t(b));
                     });
      })
      .Case([&](DivOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat()
                   ? zipFloat(x, y, [](double a, double b) { return a / b; })
                   : zipInt(x, y, [](int64_t a, int64_t b) -> int64_t {
                       if (b == 0 || (b == -1 && a == INT64_MIN))
                         return b == 0 ? 0 : a;
                       return a / b;
                     });
      })
      .Case([&](MaxOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat() ? zipFloat(x, y,
                                      [](double a, double b) {
                                        if (std::isnan(a) || std::isnan(b))
                                          return std::nan("");
                                        return std::max(a, b);
                                      })
                           : zipInt(x, y, [](int64_t a, int64_t b) {
                               return std::max(a, b);
                             });
      })
      .Case([&](MinOp o) {
        const HostTensor &x = in(o.getLhs()), &y = in(o.getRhs());
        return x.isFloat() ? zipFloat(x, y,
                                      [](double a, double b) {
                                        if (std::isnan(a) || std::isnan(b))
                                          return std::nan("");
                                        return std::min(a, b);
                                      })
                           : zipInt(x, y, [](int64_t a, int64_t b) {
                               return std::min(a, b);
                             });
      })
      .Case([&](PowOp o) {
        return zipFloat(in(o.getLhs()), in(o.getRhs()),
                        [](double a, double b) { return std::pow(a, b); });
      })
      .Case([&](CompareOp o) {
        CompareDirection dir = o.getDirection();
        auto test = [dir](auto a, auto b) -> bool {
          switch (dir) {
          case CompareDirection::eq: return a == b;
          case CompareDirection::ne: return a != b;
          case CompareDirection::lt: return a < b;
          case CompareDirection::le: return a <= b;
          case CompareDirection::gt: return a > b;
          case CompareDirection::ge: return a >= b;
          }
          return false;
        };
        return compare(
            in(o.getLhs()), in(o.getRhs()),
            [&](double a, double b) { return test(a, b); },
            [&](int64_t a, int64_t b) { return test(a, b); });
      })
      .Case([&](SelectOp o) {
        return select(in(o.getPred()), in(o.getOnTrue()), in(o.getOnFalse()));
      })
      .Default([&](Operation *) { return evalUnary(op); });
}

/// Element-wise unary math.
llvm::Expected<HostTensor> Evaluator::evalUnary(Operation *op) {
  auto unaryF = [&](Value x, double (*fn)(double)) {
    return kernels::mapFloat(in(x), fn);
  };
  using namespace kernels;
  return llvm::TypeSwitch<Operation *, llvm::Expected<HostTensor>>(op)
      .Case([&](NegOp o) {
        const HostTensor &x = in(o.getInput());
        return x.isFloat() ? mapFloat(x, [](double v) { return -v; })
                           : mapInt(x, [](int64_t v) { return -v; });
      })
      .Case([&](AbsOp o) {
        const HostTensor &x = in(o.getInput());
        return x.isFloat()
                   ? mapFloat(x, [](double v) { return std::fabs(v); })
                   : mapInt(x, [](int64_t v) { return v < 0 ? -v : v; });
      })
      .Case([&](ReluOp o) {
        const HostTensor &x = in(o.getInput());
        return x.isFloat()
                   ? mapFloat(x,
                              [](double v) {
                                return std::isnan(v) || v > 0 ? v : 0.0;
                              })
                   : mapInt(x, [](int64_t v) { return v > 0 ? v : 0; });
      })
      .Case([&](ExpOp o) { return unaryF(o.getInput(), std::exp); })
      .Case([&](LogOp o) { return unaryF(o.getInput(), std::log); })
      .Case([&](SqrtOp o) { return unaryF(o.getInput(), std::sqrt); })
      .Case([&](RsqrtOp o) {
        return mapFloat(in(o.getInput()),
                        [](double v) { return 1.0 / std::sqrt(v); });
      })
      .Case([&](TanhOp o) { return unaryF(o.getInput(), std::tanh); })
      .Case([&](LogisticOp o) {
        return mapFloat(in(o.getInput()),
                        [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
      })
      .Case([&](SiluOp o) {
        return mapFloat(in(o.getInput()),
                        [](double v) { return v / (1.0 + std::exp(-v)); });
      })
      .Case([&](SinOp o) { return unaryF(o.getInput(), std::sin); })
      .Case([&](CosOp o) { return unaryF(o.getInput(), std::cos); })
      .Case([&](GeluOp o) {
        if (o.getApproximation() == GeluApproximation::tanh)
          return mapFloat(in(o.getInput()), [](double v) {
            return 0.5 * v *
                   (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                                    (v + 0.044715 * v * v * v)));
          });
        return mapFloat(in(o.getInput()), [](double v) {
          return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        });
      })
      .Default([&](Operation *) { return evalCollective(op); });
}

llvm::Expected<HostTensor> Evaluator::evalCollective(Operation *op) {
  if (llvm::Error err = needRank(op))
    return std::move(err);
  llvm::Expected<Members> group = membersOf(op);
  if (!group)
    return group.takeError();
  auto run = [&](ArrayAttr, const HostTensor &mine)
      -> llvm::Expected<std::vector<TensorRef>> {
    auto all =
        rank->comm->exchange(rank->rank, group->ranks, group->index, mine);
    if (!all)
      return opError(op, llvm::toString(all.takeError()));
    return *all;
  };
  auto ptrs = [](const std::vector<TensorRef> &xs) {
    std::vector<const HostTensor *> out;
    for (const TensorRef &x : xs)
      out.push_back(x.get());
    return out;
  };
  auto myIndex = [&](ArrayAttr) { return group->index; };
  using namespace kernels;
  return llvm::TypeSwitch<Operation *, llvm::Expected<HostTensor>>(op)
      .Case([&](AllReduceOp o) -> llvm::Expected<HostTensor> {
        auto all = run(o.getAxes(), in(o.getInput()));
        if (!all)
          return all.takeError();
        return reduceAll(ptrs(*all), reductionOf(o.getKind()));
      })
      .Case([&](AllGatherOp o) -> llvm::Expected<HostTensor> {
        auto all = run(o.getAxes(), in(o.getInput()));
        if (!all)
          return all.takeError();
        return concatenate(ptrs(*all), o.getDim());
      })
      .Case([&](ReduceScatterOp o) -> llvm::Expected<HostTensor> {
        auto all = run(o.getAxes(), in(o.getInput()));
        if (!all)
          return all.takeError();
        HostTensor total = reduceAll(ptrs(*all), reductionOf(o.getKind()));
        int64_t n = all->size(), dim = o.getDim();
        int64_t piece = total.shape[dim] / n, g = myIndex(o.getAxes());
        Shape start(total.rank(), 0), limit(total.shape), strides(total.rank(), 1);
        start[dim] = g * piece;
        limit[dim] = (g + 1) * piece;
        return slice(total, start, limit, strides);
      })
      .Case([&](AllToAllOp o) -> llvm::Expected<HostTensor> {
        auto all = run(o.getAxes(), in(o.getInput()));
        if (!all)
          return all.takeError();
        int64_t n = all->size(), split = o.getSplitDim(),
                g = myIndex(o.getAxes());
        std::vector<HostTensor> pieces;
        for (const TensorRef &sender : *all) {
          int64_t piece = sender->shape[split] / n;
          Shape start(sender->rank(), 0), limit(sender->shape),
              strides(sender->rank(), 1);
          start[split] = g * piece;
          limit[split] = (g + 1) * piece;
          pieces.push_back(slice(*sender, start, limit, strides));
        }
        std::vector<const HostTensor *> views;
        for (const HostTensor &p : pieces)
          views.push_back(&p);
        return concatenate(views, o.getConcatDim());
      })
      .Case([&](CollectivePermuteOp o) -> llvm::Expected<HostTensor> {
        auto all = run(o.getAxes(), in(o.getInput()));
        if (!all)
          return all.takeError();
        int64_t g = myIndex(o.getAxes());
        ArrayRef<int64_t> pairs = o.getPairs();
        for (size_t k = 0; k + 1 < pairs.size(); k += 2)
          if (pairs[k + 1] == g)
            return *(*all)[pairs[k]];
        const HostTensor &x = in(o.getInput());
        return HostTensor(x.dtype, x.shape);
      })
      .Case([&](RecvOp o) -> llvm::Expected<HostTensor> {
        auto value = rank->comm->recv(
            o.getChannel(), group->ranks[o.getSource()], rank->rank);
        if (!value)
          return opError(op, llvm::toString(value.takeError()));
        return std::move(*value);
      })
      .Case([&](ShardSliceOp o) -> llvm::Expected<HostTensor> {
        const HostTensor &x = in(o.getInput());
        int64_t dim = o.getDim(), g = myIndex(o.getAxes());
        int64_t piece = x.shape[dim] / int64_t(group->ranks.size());
        Shape start(x.rank(), 0), limit(x.shape), strides(x.rank(), 1);
        start[dim] = g * piece;
        limit[dim] = (g + 1) * piece;
        return slice(x, start, limit, strides);
      })
      .Case([&](AxisIndexOp o) -> llvm::Expected<HostTensor> {
        llvm::Expected<DType> dt = dtypeOf(o.getType());
        if (!dt)
          return dt.takeError();
        HostTensor t(*dt, {});
        t.setI(0, myIndex(o.getAxes()));
        return t;
      })
      .Default([&](Operation *) -> llvm::Expected<HostTensor> {
        return opError(op, "the interpreter does not support this op");
      });
}

} // namespace

llvm::Expected<std::vector<HostTensor>>
ti::runFunction(func::FuncOp func, std::vector<HostTensor> args,
                    const RankContext *rank) {
  std::vector<TensorRef> refs;
  for (HostTensor &a : args)
    refs.push_back(std::make_shared<const HostTensor>(std::move(a)));
  Evaluator evaluator(rank);
  return evaluator.call(func, std::move(refs));
}
