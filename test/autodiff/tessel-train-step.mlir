// RUN: tessel-opt %s --tessel-train-step="optimizer=adamw lr=0.01 clip-norm=1.0 weight-decay=0.1 warmup=10 total-steps=100" | FileCheck %s
// RUN: tessel-opt %s --tessel-train-step="optimizer=sgd batch=w" | FileCheck %s --check-prefix=SGD

// Parameters first, then AdamW's m and v per parameter (f32, with the
// parameter's sharding and logical axes), data, and the step; results are
// the new parameters and state, the loss and the gradient norm.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<4x3xf32> {{{[^}]*}}tessel.name = "w", tessel.runtime_role = "parameter"
// CHECK-SAME: %arg1: tensor<3xf32> {{{[^}]*}}tessel.name = "b"
// CHECK-SAME: %arg2: tensor<4x3xf32> {tessel.init = "zeros", tessel.logical_axes = ["embed", "mlp"], tessel.name = "adamw.m.w", tessel.runtime_role = "optimizer_state", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: tessel.name = "adamw.m.b"
// CHECK-SAME: tessel.name = "adamw.v.w"
// CHECK-SAME: tessel.name = "adamw.v.b"
// CHECK-SAME: %arg6: tensor<2x4xf32> {{{[^}]*}}tessel.name = "x"
// CHECK-SAME: %arg7: tensor<i32> {tessel.init = "zeros", tessel.name = "step", tessel.runtime_role = "step"}
// New parameters and state are laid out as their arguments.
// CHECK-SAME: -> (tensor<4x3xf32> {tessel.name = "w", tessel.runtime_role = "parameter", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}, tensor<3xf32> {tessel.name = "b", tessel.runtime_role = "parameter"}, tensor<4x3xf32> {tessel.name = "adamw.m.w", tessel.runtime_role = "optimizer_state", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: tensor<f32> {tessel.name = "loss", tessel.runtime_role = "loss"}, tensor<f32> {tessel.name = "grad_norm", tessel.runtime_role = "grad_norm"})
// Bias correction and the cosine schedule.
// CHECK-DAG: tessel.pow
// CHECK-DAG: tessel.cos
// CHECK: return

// With w declared data, only b is trained; SGD has one momentum slot.
// SGD-LABEL: func.func @train_step(
// SGD-SAME: tessel.name = "b"
// SGD-SAME: tessel.name = "sgd.mom.b"
// SGD-SAME: tessel.name = "w"
// SGD-SAME: tessel.name = "step"
// SGD-NOT: sgd.mom.w

tessel.mesh @mesh ["tp"=2]
func.func @forward(%w: tensor<4x3xf32> {tessel.name = "w", tessel.logical_axes = ["embed", "mlp"], tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %b: tensor<3xf32> {tessel.name = "b"},
                   %x: tensor<2x4xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bb = tessel.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = tessel.add %h, %bb : tensor<2x3xf32>
  %l = tessel.reduce sum %y, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
