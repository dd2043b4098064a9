// RUN: tessel-opt %s --tessel-grad=func=loss | FileCheck %s

// The gradient function keeps the forward computation, seeds the loss with 1
// and returns the loss then one gradient per floating-point argument, named
// after the argument. Integer arguments (labels) get no gradient.

// CHECK-LABEL: func.func @loss(
// CHECK-LABEL: func.func @loss_grad(
// CHECK-SAME: -> (tensor<f32> {tessel.name = "loss"}, tensor<8x16xf32> {tessel.name = "grad.x"}, tensor<16x4xf32> {tessel.name = "grad.w"})
// CHECK: %[[H:.*]] = tessel.dot_general %arg0, %arg1
// CHECK: %[[L:.*]] = tessel.softmax_cross_entropy
// CHECK: %[[ONE:.*]] = tessel.constant {tessel.role = "backward_input"} dense<1.000000e+00> : tensor<f32>
// The matmul's two adjoints contract against the output gradient; the
// weight's comes out in the weight's layout [16, 4], with no transpose.
// CHECK-DAG: tessel.dot_general %{{.*}}, %arg1, batching = [] x [], contracting = [1] x [1]
// CHECK-DAG: tessel.dot_general %arg0, %{{.*}}, batching = [] x [], contracting = [0] x [0] {tessel.role = "backward_weight"} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
// CHECK-NOT: tessel.transpose
// CHECK: return %[[L]],
func.func @loss(%x: tensor<8x16xf32> {tessel.name = "x"},
                %w: tensor<16x4xf32> {tessel.name = "w"},
                %labels: tensor<8xi32> {tessel.name = "labels"}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l = tessel.softmax_cross_entropy %h, %labels, ignore_index = -100, reduction = mean
      : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
