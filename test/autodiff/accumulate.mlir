// RUN: tessel-opt %s --tessel-train-step="optimizer=sgd lr=0.1 accumulate=true lr-argument=true" | FileCheck %s

// Tests that gradient accumulation adds a running-sum slot per parameter
// and the scalar arguments apply and grad_scale (before lr and step), that
// the step's gradient is (sum + gradient) * grad_scale, and that new
// parameters, optimizer state and sums are chosen by apply.
func.func @forward(%w: tensor<4x3xf32> {tessel.name = "w"}, %x: tensor<2x4xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]}) -> tensor<f32> {
  %y = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %l = tessel.reduce sum %y, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[W:[^:]*]]: tensor<4x3xf32> {{[^}]*}}tessel.name = "w", tessel.runtime_role = "parameter"}
// CHECK-SAME:    %[[MOM:[^:]*]]: tensor<4x3xf32> {{[^}]*}}tessel.name = "sgd.mom.w", tessel.runtime_role = "optimizer_state"}
// CHECK-SAME:    %[[SUM:[^:]*]]: tensor<4x3xf32> {{[^}]*}}tessel.name = "sgd.accum.w", tessel.runtime_role = "accumulator"}
// CHECK-SAME:    %{{[^:]*}}: tensor<2x4xf32> {{[^}]*}}tessel.name = "x"}
// CHECK-SAME:    %[[APPLY:[^:]*]]: tensor<i32> {tessel.init = "ones", tessel.name = "apply", tessel.runtime_role = "apply"}
// CHECK-SAME:    %[[SCALE:[^:]*]]: tensor<f32> {tessel.init = "ones", tessel.name = "grad_scale", tessel.runtime_role = "grad_scale"}
// CHECK-SAME:    %{{[^:]*}}: tensor<f32> {tessel.init = "constant:0.10000000000000001", tessel.name = "lr", tessel.runtime_role = "learning_rate"}
// CHECK-SAME:    %{{[^:]*}}: tensor<i32> {tessel.init = "zeros", tessel.name = "step", tessel.runtime_role = "step"}
// CHECK-SAME:  -> (tensor<4x3xf32> {{[^}]*}}tessel.name = "w", tessel.runtime_role = "parameter"}, tensor<4x3xf32> {{[^}]*}}tessel.name = "sgd.mom.w", tessel.runtime_role = "optimizer_state"}, tensor<4x3xf32> {{[^}]*}}tessel.name = "sgd.accum.w", tessel.runtime_role = "accumulator"}, tensor<f32> {tessel.name = "loss", tessel.runtime_role = "loss"}, tensor<f32> {tessel.name = "grad_norm", tessel.runtime_role = "grad_norm"})
// CHECK:         %[[S32:.*]] = tessel.convert %[[SCALE]]
// CHECK:         %[[TOTAL:.*]] = tessel.add %[[SUM]], %{{.*}} : tensor<4x3xf32>
// CHECK:         %[[S:.*]] = tessel.broadcast_in_dim %[[S32]]
// CHECK:         tessel.mul %[[TOTAL]], %[[S]]
// CHECK:         %[[APPLIED:.*]] = tessel.compare ne, %[[APPLY]], %{{.*}} : tensor<i32>
// CHECK-COUNT-3: tessel.select
// CHECK:         return
