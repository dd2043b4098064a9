// RUN: tessel-opt %s --split-input-file --tessel-optimize-collectives | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-optimize-collectives=bucket-bytes=16 | FileCheck %s --check-prefix=SMALL

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an all-reduce whose only use takes this device's block over the
// same axes becomes a reduce-scatter.
// CHECK-LABEL: func.func @all_reduce_then_block
// CHECK-NOT: tessel.all_reduce
// CHECK-NOT: tessel.shard_slice
// CHECK: %[[R:.*]] = tessel.reduce_scatter sum %{{.*}} on @mesh ["tp"], dim = 1 : (tensor<8x4xf32>) -> tensor<8x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @all_reduce_then_block(%x: tensor<8x4xf32>) -> tensor<8x1xf32> attributes {tessel.spmd = @mesh} {
  %r = tessel.all_reduce sum %x on @mesh ["tp"] : tensor<8x4xf32>
  %s = tessel.shard_slice %r on @mesh ["tp"], dim = 1 : (tensor<8x4xf32>) -> tensor<8x1xf32>
  return %s : tensor<8x1xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that nothing folds when the block is over other axes, or the
// all-reduce has another use.
// CHECK-LABEL: func.func @block_over_other_axes
// CHECK: tessel.all_reduce sum %arg0 on @mesh ["tp"]
// CHECK: tessel.shard_slice %{{.*}} on @mesh ["dp"], dim = 0
// CHECK: tessel.all_reduce sum %arg0 on @mesh ["dp"]
// CHECK: tessel.shard_slice %{{.*}} on @mesh ["dp"], dim = 0
// CHECK-NOT: reduce_scatter
func.func @block_over_other_axes(%x: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>) attributes {tessel.spmd = @mesh} {
  %r = tessel.all_reduce sum %x on @mesh ["tp"] : tensor<8x4xf32>
  %s = tessel.shard_slice %r on @mesh ["dp"], dim = 0 : (tensor<8x4xf32>) -> tensor<4x4xf32>
  %r2 = tessel.all_reduce sum %x on @mesh ["dp"] : tensor<8x4xf32>
  %s2 = tessel.shard_slice %r2 on @mesh ["dp"], dim = 0 : (tensor<8x4xf32>) -> tensor<4x4xf32>
  return %s, %s2, %r2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an all-gather followed by this device's block cancels, and that
// the collectives left unused are removed.
// CHECK-LABEL: func.func @gather_then_block
// CHECK-NOT: tessel.all_gather
// CHECK-NOT: tessel.shard_slice
// CHECK: return %arg0
func.func @gather_then_block(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {tessel.spmd = @mesh} {
  %g = tessel.all_gather %x on @mesh ["tp"], dim = 0 : (tensor<2x4xf32>) -> tensor<8x4xf32>
  %s = tessel.shard_slice %g on @mesh ["tp"], dim = 0 : (tensor<8x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an all-gather and a block along another dimension do not
// cancel.
// CHECK-LABEL: func.func @gather_then_other_block
// CHECK: tessel.all_gather
// CHECK: tessel.shard_slice
func.func @gather_then_other_block(%x: tensor<2x4xf32>) -> tensor<8x1xf32> attributes {tessel.spmd = @mesh} {
  %g = tessel.all_gather %x on @mesh ["tp"], dim = 0 : (tensor<2x4xf32>) -> tensor<8x4xf32>
  %s = tessel.shard_slice %g on @mesh ["tp"], dim = 1 : (tensor<8x4xf32>) -> tensor<8x1xf32>
  return %s : tensor<8x1xf32>
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
