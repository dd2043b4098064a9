// RUN: tessel-opt %s --tessel-train-step="compute-type=bf16 optimizer=sgd" | FileCheck %s

// An op marked tessel.full_precision keeps f32 under mixed precision (a MoE
// router's logits, positions and loss sums), while its unmarked neighbour
// runs in bf16.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[X:.*]] = tessel.convert %{{.*}} : (tensor<4x16xf32>) -> tensor<4x16xbf16>
// CHECK: %[[W:.*]] = tessel.convert %{{.*}} : (tensor<16x8xf32>) -> tensor<16x8xbf16>
// CHECK: %[[H:.*]] = tessel.dot_general %[[X]], %[[W]], {{.*}} -> tensor<4x8xbf16>
// CHECK: %[[G:.*]] = tessel.dot_general %{{.*}}, %{{.*}}, {{.*}}tessel.full_precision{{.*}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[H32:.*]] = tessel.convert %[[H]] {{.*}}: (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: tessel.add %[[H32]], %[[G]] {{.*}}tessel.full_precision{{.*}} : tensor<4x8xf32>
func.func @forward(%w: tensor<16x8xf32> {tessel.name = "w"},
                   %r: tensor<16x8xf32> {tessel.name = "router"},
                   %x: tensor<4x16xf32> {tessel.name = "x"},
                   %labels: tensor<4xi32> {tessel.name = "labels"}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %g = tessel.dot_general %x, %r, batching = [] x [], contracting = [1] x [0]
      {tessel.full_precision} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %s = tessel.add %h, %g {tessel.full_precision} : tensor<4x8xf32>
  %l = tessel.softmax_cross_entropy %s, %labels, ignore_index = -100, reduction = mean
      : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
