// RUN: tessel-opt %s --tessel-propagate --tessel-partition | FileCheck %s

// Partial sums with the same layout are added locally and resolved once:
// the squared-norm of two tp-sharded tensors costs one all-reduce.
// CHECK-LABEL: func.func @norm
// CHECK: %[[A:.*]] = tessel.reduce sum %{{.*}}, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<f32>
// CHECK: %[[B:.*]] = tessel.reduce sum %{{.*}}, dims = [0] : (tensor<4xf32>) -> tensor<f32>
// CHECK: %[[S:.*]] = tessel.add %[[A]], %[[B]] : tensor<f32>
// CHECK: %[[R:.*]] = tessel.all_reduce sum %[[S]] on @mesh ["tp"] : tensor<f32>
// CHECK-NOT: tessel.all_reduce
// CHECK: tessel.sqrt %[[R]]
tessel.mesh @mesh ["tp"=2]
func.func @norm(%w: tensor<4x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                %b: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) -> tensor<f32> {
  %w2 = tessel.mul %w, %w : tensor<4x8xf32>
  %sw = tessel.reduce sum %w2, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  %b2 = tessel.mul %b, %b : tensor<8xf32>
  %sb = tessel.reduce sum %b2, dims = [0] : (tensor<8xf32>) -> tensor<f32>
  %s = tessel.add %sw, %sb : tensor<f32>
  %n = tessel.sqrt %s : tensor<f32>
  return %n : tensor<f32>
}

// A partial sum plus a replicated value must be resolved first.
// CHECK-LABEL: func.func @mixed
// CHECK: tessel.reduce sum
// CHECK: tessel.all_reduce sum
// CHECK: tessel.add
func.func @mixed(%w: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>},
                 %c: tensor<f32>) -> tensor<f32> {
  %sw = tessel.reduce sum %w, dims = [0] : (tensor<8xf32>) -> tensor<f32>
  %s = tessel.add %sw, %c : tensor<f32>
  return %s : tensor<f32>
}
