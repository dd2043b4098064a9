// RUN: tessel-opt %s --tessel-train-step="compute-type=bf16 optimizer=sgd" | FileCheck %s
// RUN: not tessel-opt %s --tessel-train-step="compute-type=f8" 2>&1 | FileCheck %s --check-prefix=BAD

// Mixed precision: parameters, their gradients and the optimizer state stay
// f32; matmuls and elementwise math run in bf16 on converted operands; the
// norm, the softmax and the loss run in f32.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<16x8xf32> {tessel.name = "w", tessel.runtime_role = "parameter"}
// CHECK-SAME: -> (tensor<16x8xf32> {tessel.name = "w", tessel.runtime_role = "parameter"}
// CHECK: %[[X:.*]] = tessel.convert %arg6 {{.*}}: (tensor<4x16xf32>) -> tensor<4x16xbf16>
// CHECK: %[[W:.*]] = tessel.convert %arg0 {{.*}}: (tensor<16x8xf32>) -> tensor<16x8xbf16>
// CHECK: %[[H:.*]] = tessel.dot_general %[[X]], %[[W]], {{.*}} -> tensor<4x8xbf16>
// CHECK: %[[A:.*]] = tessel.gelu %[[H]] {{.*}}: tensor<4x8xbf16>
// CHECK: %[[A32:.*]] = tessel.convert %[[A]] {{.*}}: (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[N:.*]] = tessel.layer_norm %[[A32]], %arg1, %arg2, {{.*}}: tensor<4x8xf32>, tensor<8xf32>
// CHECK: tessel.softmax_cross_entropy %[[N]], {{.*}} -> tensor<f32>
// The backward mirrors the casts: the norm's input gradient goes back to
// bf16 for gelu and the matmul, and the weight gradient (a bf16 matmul)
// comes back to f32 for the update.
// CHECK: tessel.convert %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[DW:.*]] = tessel.dot_general %[[X]], %{{.*}}, batching = [] x [], contracting = [0] x [0] {{.*}} -> tensor<16x8xbf16>
// CHECK: %[[DW32:.*]] = tessel.convert %[[DW]] {{.*}}: (tensor<16x8xbf16>) -> tensor<16x8xf32>
// The global norm sums the squares in f64.
// CHECK: %[[DW64:.*]] = tessel.convert %[[DW32]] {tessel.role = "optimizer"} : (tensor<16x8xf32>) -> tensor<16x8xf64>
// CHECK: tessel.mul %[[DW64]], %[[DW64]] {tessel.role = "optimizer"} : tensor<16x8xf64>

// BAD: unknown compute-type 'f8'; expected bf16, f16 or f32
func.func @forward(%w: tensor<16x8xf32> {tessel.name = "w"},
                   %g: tensor<8xf32> {tessel.name = "ln.weight"},
                   %b: tensor<8xf32> {tessel.name = "ln.bias"},
                   %x: tensor<4x16xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]},
                   %labels: tensor<4xi32> {tessel.name = "labels"}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %a = tessel.gelu %h approximation = tanh : tensor<4x8xf32>
  %n = tessel.layer_norm %a, %g, %b, epsilon = 1.0e-05 : tensor<4x8xf32>, tensor<8xf32>
  %l = tessel.softmax_cross_entropy %n, %labels, ignore_index = -100, reduction = mean
      : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
