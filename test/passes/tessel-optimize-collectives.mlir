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
// CHECK-DAG: %[[T:.*]] = tessel.all_reduce sum %arg0 on @mesh ["tp"]
// CHECK-DAG: %[[D:.*]] = tessel.all_reduce sum %arg0 on @mesh ["dp"]
// CHECK-DAG: tessel.shard_slice %[[T]] on @mesh ["dp"], dim = 0
// CHECK-DAG: tessel.shard_slice %[[D]] on @mesh ["dp"], dim = 0
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

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that gradient buckets survive a backward's tensor-parallel
// all-reduces in between (one open bucket per group), the identity reshapes
// autodiff puts after a gradient's reduction, and the partitioner's placing
// of an all-reduce where its result is first used: each bucketable
// all-reduce moves up to its input's definition. The three dp gradients
// become one all-reduce where the last was computed (before the unrelated
// %late), the two tp reductions another, and a use of a tp result combines
// the tp bucket alone.
// CHECK-LABEL: func.func @interleaved_groups
// CHECK: %[[T:.*]] = tessel.concatenate {{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
// CHECK: tessel.all_reduce sum %[[T]] on @mesh ["tp"] : tensor<4xf32>
// CHECK: %[[P:.*]] = tessel.mul
// CHECK: %[[H:.*]] = tessel.add %arg4, %arg4
// CHECK: tessel.reshape %[[H]] : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK: %[[D:.*]] = tessel.concatenate {{.*}} : (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<16xf32>
// CHECK: tessel.all_reduce sum %[[D]] on @mesh ["dp"] : tensor<16xf32>
// CHECK-NOT: tessel.reshape %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: tessel.mul %[[P]], %[[P]]
// CHECK-NOT: tessel.all_reduce
// SMALL-LABEL: func.func @interleaved_groups
// SMALL-COUNT-4: tessel.all_reduce
// SMALL-NOT: tessel.all_reduce
func.func @interleaved_groups(%g0: tensor<4xf32>, %t0: tensor<2xf32>, %g1: tensor<4xf32>, %t1: tensor<2xf32>, %g2: tensor<2x4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2xf32>) attributes {tessel.spmd = @mesh} {
  %0 = tessel.all_reduce sum %g0 on @mesh ["dp"] : tensor<4xf32>
  %1 = tessel.reshape %0 : (tensor<4xf32>) -> tensor<4xf32>
  %a = tessel.add %t0, %t0 : tensor<2xf32>
  %2 = tessel.all_reduce sum %a on @mesh ["tp"] : tensor<2xf32>
  %3 = tessel.all_reduce sum %g1 on @mesh ["dp"] : tensor<4xf32>
  %4 = tessel.reshape %3 : (tensor<4xf32>) -> tensor<4xf32>
  %b = tessel.add %t1, %t1 : tensor<2xf32>
  %5 = tessel.all_reduce sum %b on @mesh ["tp"] : tensor<2xf32>
  %6 = tessel.mul %2, %5 : tensor<2xf32>
  %h = tessel.add %g2, %g2 : tensor<2x4xf32>
  %late = tessel.mul %6, %6 : tensor<2xf32>
  %7 = tessel.all_reduce sum %h on @mesh ["dp"] : tensor<2x4xf32>
  return %1, %4, %7, %late : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that a chain of adds summing several sum all-reduces of one group
// (a global norm's partial squares under ZeRO-2) becomes one all-reduce of
// their sum; a replicated term, and an all-reduce of another group, stay
// outside it.
// CHECK-LABEL: func.func @summed_all_reduces
// CHECK:         tessel.all_reduce sum %arg4 on @mesh ["tp"]
// CHECK:         %[[S1:.*]] = tessel.add %arg2, %arg1
// CHECK-NEXT:    %[[S2:.*]] = tessel.add %[[S1]], %arg0
// CHECK-NEXT:    tessel.all_reduce sum %[[S2]] on @mesh ["dp"]
// CHECK-NOT:     tessel.all_reduce
// CHECK:         tessel.sqrt
// SMALL-LABEL: func.func @summed_all_reduces
// SMALL-COUNT-2: tessel.all_reduce
// SMALL-NOT:     tessel.all_reduce
func.func @summed_all_reduces(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<f64>, %r: tensor<f64>, %t: tensor<f64>) -> tensor<f64> attributes {tessel.spmd = @mesh} {
  %0 = tessel.all_reduce sum %a on @mesh ["dp"] : tensor<f64>
  %1 = tessel.all_reduce sum %b on @mesh ["dp"] : tensor<f64>
  %2 = tessel.add %0, %1 : tensor<f64>
  %3 = tessel.add %2, %r : tensor<f64>
  %4 = tessel.all_reduce sum %c on @mesh ["dp"] : tensor<f64>
  %5 = tessel.add %3, %4 : tensor<f64>
  %6 = tessel.all_reduce sum %t on @mesh ["tp"] : tensor<f64>
  %7 = tessel.add %5, %6 : tensor<f64>
  %8 = tessel.sqrt %7 : tensor<f64>
  return %8 : tensor<f64>
}

// -----

tessel.mesh @mesh ["dp"=1, "tp"=4]

// Tests that collectives over a group of one device (a pipeline stage's
// "dp"=1) are their operands, and that those over a larger group (dp and tp
// together, 4 devices) stay.
// CHECK-LABEL: func.func @single_device_groups
// SMALL-LABEL: func.func @single_device_groups
// CHECK-NOT: on @mesh ["dp"]
// CHECK: %[[T:.*]] = tessel.all_reduce sum %arg0 on @mesh ["dp", "tp"]
// CHECK-NEXT: return %arg0, %arg0, %[[T]]
func.func @single_device_groups(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) attributes {tessel.spmd = @mesh} {
  %r = tessel.all_reduce sum %x on @mesh ["dp"] : tensor<8x4xf32>
  %g = tessel.all_gather %r on @mesh ["dp"], dim = 0 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = tessel.reduce_scatter sum %x on @mesh ["dp"], dim = 1 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %b = tessel.shard_slice %s on @mesh ["dp"], dim = 0 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %t = tessel.all_reduce sum %x on @mesh ["dp", "tp"] : tensor<8x4xf32>
  return %g, %b, %t : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
