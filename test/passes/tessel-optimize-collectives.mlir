// RUN: tessel-opt %s --split-input-file --tessel-optimize-collectives | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-optimize-collectives=bucket-bytes=16 | FileCheck %s --check-prefix=SMALL

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an all-reduce whose only use takes this device's block over the
// same axes becomes a reduce-scatter.
// CHECK-LABEL: func.func @all_reduce_then_block
// CHECK-NOT: tessel.all_reduce
// CHECK-NOT: tessel.axis_index
// CHECK: %[[R:.*]] = tessel.reduce_scatter sum %{{.*}} on @mesh ["tp"], dim = 0 : (tensor<8x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @all_reduce_then_block(%x: tensor<8x4xf32>) -> tensor<2x4xf32> attributes {tessel.spmd = @mesh} {
  %r = tessel.all_reduce sum %x on @mesh ["tp"] : tensor<8x4xf32>
  %i = tessel.axis_index on @mesh ["tp"] : tensor<i32>
  %iota = tessel.iota dim = 0 : tensor<2xi32>
  %two = tessel.constant dense<2> : tensor<i32>
  %m = tessel.mul %i, %two : tensor<i32>
  %b = tessel.broadcast_in_dim %m, dims = [] : (tensor<i32>) -> tensor<2xi32>
  %idx = tessel.add %iota, %b : tensor<2xi32>
  %s = tessel.gather %r[%idx], axis = 0 : (tensor<8x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an all-gather followed by this device's block cancels, and that
// the collectives left unused are removed.
// CHECK-LABEL: func.func @gather_then_block
// CHECK-NOT: tessel.all_gather
// CHECK-NOT: tessel.axis_index
// CHECK: return %arg0
func.func @gather_then_block(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {tessel.spmd = @mesh} {
  %g = tessel.all_gather %x on @mesh ["tp"], dim = 0 : (tensor<2x4xf32>) -> tensor<8x4xf32>
  %i = tessel.axis_index on @mesh ["tp"] : tensor<i32>
  %iota = tessel.iota dim = 0 : tensor<2xi32>
  %two = tessel.constant dense<2> : tensor<i32>
  %m = tessel.mul %i, %two : tensor<i32>
  %b = tessel.broadcast_in_dim %m, dims = [] : (tensor<i32>) -> tensor<2xi32>
  %idx = tessel.add %iota, %b : tensor<2xi32>
  %s = tessel.gather %g[%idx], axis = 0 : (tensor<8x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests bucketing: three small all-reduces over dp become one all-reduce of
// their concatenation; one over other axes, and one whose input uses an
// earlier result, are not combined with them. With a 16-byte bucket only the
// two scalars combine.
// CHECK-LABEL: func.func @buckets
// CHECK: %[[J:.*]] = tessel.concatenate {{.*}} dim = 0 : (tensor<1xf32>, tensor<1xf32>, tensor<4xf32>) -> tensor<6xf32>
// CHECK: tessel.all_reduce sum %[[J]] on @mesh ["dp"] : tensor<6xf32>
// CHECK: tessel.all_reduce sum %{{.*}} on @mesh ["tp"] : tensor<f32>
// CHECK: tessel.all_reduce sum %{{.*}} on @mesh ["dp"] : tensor<f32>
// CHECK-NOT: tessel.all_reduce
// SMALL-LABEL: func.func @buckets
// SMALL: tessel.concatenate {{.*}} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
// SMALL: tessel.all_reduce sum %{{.*}} on @mesh ["dp"] : tensor<4xf32>
func.func @buckets(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<4xf32>, %d: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>) attributes {tessel.spmd = @mesh} {
  %0 = tessel.all_reduce sum %a on @mesh ["dp"] : tensor<f32>
  %1 = tessel.all_reduce sum %b on @mesh ["dp"] : tensor<f32>
  %2 = tessel.all_reduce sum %c on @mesh ["dp"] : tensor<4xf32>
  %3 = tessel.all_reduce sum %d on @mesh ["tp"] : tensor<f32>
  %4 = tessel.add %0, %1 : tensor<f32>
  %5 = tessel.all_reduce sum %4 on @mesh ["dp"] : tensor<f32>
  return %0, %1, %2, %3, %5 : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>
}
