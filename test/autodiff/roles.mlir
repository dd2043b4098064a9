// RUN: tessel-opt %s --tessel-train-step=optimizer=sgd | FileCheck %s
// RUN: tessel-opt %s --tessel-grad=recompute=layers | FileCheck %s --check-prefix=RECOMPUTE
// RUN: tessel-opt %s --tessel-grad=reshard-after-forward=false | FileCheck %s --check-prefix=KEEP

// Every op of a train step has a role. Backward ops inherit the stage (and
// layer) of the forward op whose VJP they are: B (backward_input) computes
// the cotangents that flow to earlier ops, W (backward_weight) only
// parameter gradients, which a zero-bubble pipeline schedule may defer. The
// optimizer update of a parameter runs in the stage of its first user.
// CHECK-LABEL: func.func @train_step(
// CHECK: tessel.dot_general %arg4, %arg0, {{.*}}{tessel.layer = 0 : i64, tessel.role = "forward", tessel.stage = 0 : i64}
// CHECK: tessel.tanh {{.*}}{tessel.layer = 0 : i64, tessel.role = "forward", tessel.stage = 0 : i64}
// CHECK: tessel.dot_general {{.*}}{tessel.layer = 1 : i64, tessel.role = "forward", tessel.stage = 1 : i64}
// CHECK: tessel.reduce sum {{.*}}{tessel.role = "forward", tessel.stage = 1 : i64}
// CHECK: %[[SEED:.*]] = tessel.constant {tessel.role = "backward_input", tessel.stage = 1 : i64} dense<1.0
// The matmul of stage 1: its input gradient (g x w2^T) is B, its weight
// gradient (a1^T x g) is W.
// CHECK: tessel.dot_general %{{.*}}, %arg1, batching = [] x [], contracting = [1] x [1] {tessel.layer = 1 : i64, tessel.role = "backward_input", tessel.stage = 1 : i64}
// CHECK: tessel.dot_general %{{.*}}, %{{.*}}, batching = [] x [], contracting = [0] x [0] {tessel.layer = 1 : i64, tessel.role = "backward_weight", tessel.stage = 1 : i64}
// tanh's VJP in stage 0 is B; the first layer's weight gradient is W.
// CHECK: tessel.mul {{.*}}{tessel.layer = 0 : i64, tessel.role = "backward_input", tessel.stage = 0 : i64}
// CHECK: tessel.dot_general %arg4, {{.*}}{tessel.layer = 0 : i64, tessel.role = "backward_weight", tessel.stage = 0 : i64}
// The global norm spans stages; each update runs in its parameter's stage.
// CHECK: tessel.sqrt {{.*}}{tessel.role = "optimizer"}
// CHECK: tessel.sub %arg0, {{.*}}{tessel.role = "optimizer", tessel.stage = 0 : i64}
// CHECK: tessel.sub %arg1, {{.*}}{tessel.role = "optimizer", tessel.stage = 1 : i64}

// recompute=layers: layer 0's activations are recomputed in the backward
// (role recompute) instead of kept; the backward reads the recomputed tanh.
// w1 is split over dp, so the backward reads it through a fresh copy (the
// partitioner gathers it again: reshard-after-forward).
// RECOMPUTE-LABEL: func.func @forward_grad(
// RECOMPUTE: %[[T:.*]] = tessel.tanh {{.*}}role = "forward"
// RECOMPUTE: %[[W1:.*]] = tessel.sharding_constraint %arg0 <@mesh, [{"dp"}, {}]> {{.*}}role = "recompute"
// RECOMPUTE: %[[H:.*]] = tessel.dot_general %arg2, %[[W1]], {{.*}}role = "recompute"
// RECOMPUTE: %[[T2:.*]] = tessel.tanh %[[H]] {{.*}}role = "recompute"
// RECOMPUTE: tessel.mul %[[T2]], %[[T2]] {{.*}}role = "backward_input"
// RECOMPUTE-NOT: tessel.mul %[[T]]
// RECOMPUTE: return

// Without reshard-after-forward the backward reads w1 itself.
// KEEP-LABEL: func.func @forward_grad(
// KEEP-NOT: sharding_constraint
// KEEP: tessel.dot_general %{{.*}}, %arg0, batching = [] x [], contracting = [1] x [1]
// KEEP: return

tessel.mesh @mesh ["dp"=2]
func.func @forward(%w1: tensor<4x8xf32> {tessel.name = "w1", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w2: tensor<8x3xf32> {tessel.name = "w2"},
                   %x: tensor<2x4xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] {tessel.stage = 0, tessel.layer = 0}
      : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %a = tessel.tanh %h {tessel.stage = 0, tessel.layer = 0} : tensor<2x8xf32>
  %y = tessel.dot_general %a, %w2, batching = [] x [], contracting = [1] x [0] {tessel.stage = 1, tessel.layer = 1}
      : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %l = tessel.reduce sum %y, dims = [0, 1] {tessel.stage = 1} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
