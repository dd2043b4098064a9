//===- Optimizer.cpp - SGD with momentum and AdamW ------------------------===//

#include "Optimizer.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::autodiff;

autodiff::Optimizer::~Optimizer() = default;

namespace {

/// mom = momentum * mom + g; update = lr * mom.
class Sgd final : public Optimizer {
public:
  explicit Sgd(double momentum) : momentum(momentum) {}
  StringRef name() const override { return "sgd"; }
  SmallVector<StringRef> slots() const override { return {"mom"}; }
  Value update(Emitter &e, Value g, Value, Value lr, ArrayRef<Value> state,
               SmallVectorImpl<Value> &newState) const override {
    Value mom = e.add(e.scale(state[0], e.cst(momentum)), g);
    newState.push_back(mom);
    return e.scale(mom, lr);
  }

private:
  double momentum;
};

/// Adam's moments with bias correction (decoupled weight decay is the
/// train step's).
class AdamW final : public Optimizer {
public:
  AdamW(double beta1, double beta2, double epsilon)
      : beta1(beta1), beta2(beta2), epsilon(epsilon) {}
  StringRef name() const override { return "adamw"; }
  SmallVector<StringRef> slots() const override { return {"m", "v"}; }
  Value update(Emitter &e, Value g, Value t, Value lr, ArrayRef<Value> state,
               SmallVectorImpl<Value> &newState) const override {
    Value m = e.add(e.scale(state[0], e.cst(beta1)),
                    e.scale(g, e.cst(1.0 - beta1)));
    Value v = e.add(e.scale(state[1], e.cst(beta2)),
                    e.scale(e.mul(g, g), e.cst(1.0 - beta2)));
    newState.push_back(m);
    newState.push_back(v);
    // Bias corrections 1 - beta^t.
    Value bc1 = e.sub(e.cst(1.0), PowOp::create(e.b, e.loc, e.cst(beta1), t));
    Value bc2 = e.sub(e.cst(1.0), PowOp::create(e.b, e.loc, e.cst(beta2), t));
    Value denom = e.add(e.scale(e.sqrt(v), e.div(e.cst(1.0), e.sqrt(bc2))),
                        e.broadcast(e.cst(epsilon), v));
    return e.scale(e.div(m, denom), e.div(lr, bc1));
  }

private:
  double beta1, beta2, epsilon;
};

} // namespace

std::unique_ptr<Optimizer>
autodiff::createOptimizer(const TrainStepOptions &o) {
  switch (o.optimizer) {
  case TrainStepOptions::Optimizer::SGD:
    return std::make_unique<Sgd>(o.momentum);
  case TrainStepOptions::Optimizer::AdamW:
    return std::make_unique<AdamW>(o.beta1, o.beta2, o.epsilon);
  }
  return nullptr;
}
