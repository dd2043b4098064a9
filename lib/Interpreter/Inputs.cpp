//===- Inputs.cpp - deterministic inputs for a function -------------------===//

#include "tessel/interpreter/Inputs.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/interpreter/Interpreter.h"

#include <set>

using namespace mlir;
using namespace mlir::tessel;
using namespace ::tessel;
using namespace ::tessel::interp;
namespace ti = ::tessel::interp;

static llvm::Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

llvm::Expected<std::vector<HostTensor>>
ti::makeInputs(func::FuncOp func, uint64_t seed, const NamedTensors *given,
                   llvm::StringRef source) {
  std::vector<HostTensor> inputs;
  if (given) {
    std::set<std::string> names;
    for (unsigned a = 0; a < func.getNumArguments(); ++a)
      names.insert(argName(func, a));
    for (const auto &[name, t] : given->tensors)
      if (!names.count(name)) {
        std::string known;
        for (const std::string &n : names)
          known += (known.empty() ? "" : ", ") + n;
        return fail(source + ": tensor '" + name +
                    "' matches no argument of @" + func.getSymName() +
                    " (arguments: " + known + ")");
      }
  }
  for (unsigned a = 0; a < func.getNumArguments(); ++a) {
    RankedTensorType type = globalArgType(func, a);
    llvm::Expected<DType> dt = dtypeOf(type);
    if (!dt)
      return dt.takeError();
    std::string name = argName(func, a);
    if (const HostTensor *t = given ? given->find(name) : nullptr) {
      if (t->dtype != *dt || ArrayRef<int64_t>(t->shape) != type.getShape())
        return fail(source + ": tensor '" + name + "' is " + t->typeString() +
                    " but argument #" + Twine(a) + " of @" +
                    func.getSymName() + " needs " +
                    typeString(*dt, type.getShape()));
      inputs.push_back(*t);
      continue;
    }
    llvm::Expected<InitSpec> spec = initSpecFor(func, a);
    if (!spec)
      return fail("argument #" + Twine(a) + " ('" + name +
                  "'): " + llvm::toString(spec.takeError()));
    HostTensor t(*dt, type.getShape());
    fillTensor(t, *spec, seed, streamOf(name));
    inputs.push_back(std::move(t));
  }
  return inputs;
}
