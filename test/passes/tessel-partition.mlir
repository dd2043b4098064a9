// RUN: tessel-opt %s --split-input-file --tessel-partition 2>/dev/null | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-partition 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: not tessel-opt %s --split-input-file --tessel-partition=strict 2>&1 | FileCheck %s --check-prefix=STRICT

// Each case states its layouts directly (as --tessel-propagate leaves them)
// and checks the reshard the planner emits.

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests local shapes, tessel.spmd, and that an axis dropped from a dimension
// is an all-gather.
// CHECK-LABEL: func.func @drop_axis
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>})
// CHECK-SAME: attributes {tessel.spmd = @mesh}
// CHECK: %[[G:.*]] = tessel.all_gather %[[X]] on @mesh ["tp"], dim = 1 : (tensor<8x4xf32>) -> tensor<8x16xf32>
// CHECK: return %[[G]]
func.func @drop_axis(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>}) {
  return %x : tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an uneven added axis pads the dimension to a whole number of
// blocks first (5 rows in blocks of 3; the padding is zeros).
// CHECK-LABEL: func.func @add_axis_uneven
// CHECK: %[[P:.*]] = tessel.pad %arg0
// CHECK-SAME: -> tensor<6x16xf32>
// CHECK: tessel.shard_slice %[[P]] on @mesh ["dp"], dim = 0 : (tensor<6x16xf32>) -> tensor<3x16xf32>
func.func @add_axis_uneven(%x: tensor<5x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>})
    -> (tensor<5x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}) {
  return %x : tensor<5x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an added axis is a local slice: no communication.
// CHECK-LABEL: func.func @add_axis
// CHECK-NOT: tessel.all_
// CHECK: tessel.shard_slice %arg0 on @mesh ["dp"], dim = 0 : (tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: tessel.all_
// CHECK: return
func.func @add_axis(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}) {
  return %x : tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an axis moving between dimensions is one all-to-all.
// CHECK-LABEL: func.func @move_axis
// CHECK: tessel.all_to_all %{{.*}} on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<8x4xf32>) -> tensor<2x16xf32>
// CHECK-NOT: tessel.all_gather
func.func @move_axis(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) {
  return %x : tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests partial results: a contraction over a split dimension is partial;
// a replicated user all-reduces it, a user split on the same axis
// reduce-scatters it.
// CHECK-LABEL: func.func @partial
// CHECK: %[[P:.*]] = tessel.dot_general {{.*}} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// CHECK: tessel.all_reduce sum %[[P]] on @mesh ["tp"] : tensor<8x16xf32>
// CHECK: tessel.reduce_scatter sum %[[P]] on @mesh ["tp"], dim = 0 : (tensor<8x16xf32>) -> tensor<2x16xf32>
func.func @partial(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w: tensor<16x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>},
        tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) {
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %0, %0 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests uneven dimensions: 10 over tp=4 is padded to blocks of 3; the
// argument records its global type; a sum over the padded dimension masks
// the padding to zero first.
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: tensor<3xf32> {tessel.global_type = tensor<10xf32>, tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}
// CHECK: %[[E:.*]] = tessel.exp
// CHECK: %[[V:.*]] = tessel.compare lt
// CHECK: %[[M:.*]] = tessel.select %[[V]], %[[E]], %{{.*}} : tensor<3xi1>, tensor<3xf32>
// CHECK: %[[S:.*]] = tessel.reduce sum %[[M]], dims = [0] : (tensor<3xf32>) -> tensor<f32>
// CHECK: tessel.all_reduce sum %[[S]] on @mesh ["tp"] : tensor<f32>
func.func @uneven(%x: tensor<10xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>})
    -> (tensor<f32> {tessel.sharding = #tessel.sharding<@mesh, []>}) {
  %0 = tessel.exp %x {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>} : tensor<10xf32>
  %1 = tessel.reduce sum %0, dims = [0] {tessel.sharding = #tessel.sharding<@mesh, []>} : (tensor<10xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that a reshard only a gather-then-slice can do is reported (a
// warning; an error under strict) naming both shardings.
// CHECK-LABEL: func.func @remat
// CHECK: tessel.all_gather
// WARN: warning: resharding dimension 0 from {"dp"} to {"tp"} rematerializes it (gather, then slice)
// STRICT: error: resharding dimension 0 from {"dp"} to {"tp"} rematerializes it (gather, then slice)
func.func @remat(%x: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>})
    -> (tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) {
  return %x : tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=3]

// Tests that the same axes of a dimension in another order are one
// collective-permute: block k moves from the device that holds it under
// (dp, tp) to the one that holds it under (tp, dp).
// CHECK-LABEL: func.func @reorder_axes
// CHECK: tessel.collective_permute %{{.*}} on @mesh ["dp", "tp"], pairs = [0 -> 0, 1 -> 3, 2 -> 1, 3 -> 4, 4 -> 2, 5 -> 5] : tensor<2x2xf32>
// CHECK-NOT: tessel.all_gather
func.func @reorder_axes(%x: tensor<12x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>})
    -> (tensor<12x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp", "dp"}, {}]>}) {
  return %x : tensor<12x2xf32>
}
