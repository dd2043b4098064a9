// RUN: tessel-opt %s --split-input-file --tessel-propagate | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-propagate=explain=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests pass-through factors forward and backward: an elementwise chain
// takes the argument's sharding, and an annotated result flows back to an
// unannotated argument.
// CHECK-LABEL: func.func @pass_through
// CHECK-SAME: %{{.*}}: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: %{{.*}}: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp", ?}]>}
// CHECK: tessel.exp {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp", ?}]>}
// CHECK: tessel.add {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp"}]>}
func.func @pass_through(%a: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                        %b: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {"tp"}]>}) {
  %0 = tessel.exp %b : tensor<8x16xf32>
  %1 = tessel.add %0, %a : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests a reduction factor: the contracting dimension's sharding passes
// between the operands but not to the result (which is partial).
// CHECK-LABEL: func.func @reduction
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{"tp", ?}, {?}]>}
// CHECK: tessel.dot_general {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{?}, {?}]>}
// CHECK: tessel.reduce sum {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{?}]>}
func.func @reduction(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                     %w: tensor<16x4xf32>) -> tensor<8xf32> {
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = tessel.reduce sum %0, dims = [1] : (tensor<8x4xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests need-replication factors: softmax's dimension, top_k's last
// dimension and a strided slice's dimension never receive a sharding,
// while the other dimensions pass through; a stride-1 window (slice, pad)
// is a permutation factor and does (the partitioner moves its halo).
// CHECK-LABEL: func.func @need_replication
// CHECK: tessel.softmax {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
// CHECK: tessel.top_k {{.*}}{tessel.sharding = [#tessel.sharding<@mesh, [{"dp", ?}, {?}]>, #tessel.sharding<@mesh, [{"dp", ?}, {?}]>]}
// CHECK: tessel.slice {{.*}}strides = [1, 2] {tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
// CHECK: tessel.slice {{.*}}strides = [1, 1] {tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp", ?}]>}
// CHECK: tessel.pad {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp", ?}]>}
func.func @need_replication(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp"}]>})
    -> (tensor<8x16xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<8x15xf32>, tensor<8x18xf32>) {
  %0 = tessel.softmax %x, dim = 1 : tensor<8x16xf32>
  %v, %i = tessel.top_k %x, k = 2 : (tensor<8x16xf32>) -> (tensor<8x2xf32>, tensor<8x2xi32>)
  %s = tessel.slice %x, start = [0, 0], limit = [8, 8], strides = [1, 2] : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %w = tessel.slice %x, start = [0, 1], limit = [8, 16], strides = [1, 1] : (tensor<8x16xf32>) -> tensor<8x15xf32>
  %p = tessel.pad %x, low = [0, 1], high = [0, 1], value = 0.0 : (tensor<8x16xf32>) -> tensor<8x18xf32>
  return %0, %v, %s, %w, %p : tensor<8x16xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<8x15xf32>, tensor<8x18xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that a reshape splits a dimension's axes over its factors: [8, 32]
// with tp on 32 -> [8, 4, 8] puts tp on the 4 (heads), and back.
// CHECK-LABEL: func.func @reshape_factors
// CHECK: tessel.reshape {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{?}, {"tp", ?}, {?}]>}
// CHECK: tessel.transpose {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"tp", ?}, {?}, {?}]>}
func.func @reshape_factors(%x: tensor<8x32xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) -> tensor<4x8x8xf32> {
  %0 = tessel.reshape %x : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
  %1 = tessel.transpose %0, permutation = [1, 0, 2] : (tensor<8x4x8xf32>) -> tensor<4x8x8xf32>
  return %1 : tensor<4x8x8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that a factor split unevenly does not split a merged dimension: the
// 6 rows are split over tp=4 (blocks of 2, padded), but in [6, 4] -> [24]
// tp does not divide the rows' factor 6, so the 24 stays unsplit (blocks of
// 6 would cut rows in half); dp (divides 6) does reach it.
// CHECK-LABEL: func.func @reshape_uneven_major_factor
// CHECK: tessel.reshape {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{?}]>}
// CHECK: tessel.reshape {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}]>}
func.func @reshape_uneven_major_factor(%x: tensor<6x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>},
                                       %y: tensor<6x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>})
    -> (tensor<24xf32>, tensor<24xf32>) {
  %0 = tessel.reshape %x : (tensor<6x4xf32>) -> tensor<24xf32>
  %1 = tessel.reshape %y : (tensor<6x4xf32>) -> tensor<24xf32>
  return %0, %1 : tensor<24xf32>, tensor<24xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that closed dimensions are never changed, even where the other
// operand would extend them, while open ones are.
// CHECK-LABEL: func.func @closed_untouched
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp"}]>}
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {"tp", ?}]>}
func.func @closed_untouched(%a: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {}]>},
                            %b: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp"}]>},
                            %c: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {?}]>}) -> tensor<8x16xf32> {
  %0 = tessel.add %a, %b : tensor<8x16xf32>
  %1 = tessel.add %0, %c : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests priorities: p1 propagates before p2, so the shared value takes the
// p1 sharding even though the p2 operand is larger. Propagated dimensions
// carry the priority of the annotation they came from (unless p0, the
// default), so that a second run ranks conflicts the same way.
// CHECK-LABEL: func.func @priorities
// CHECK: tessel.add {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"tp", ?}p1]>}
// CHECK: tessel.broadcast_in_dim {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"tp", ?}p1, {?}]>}
// CHECK: tessel.add {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"tp", ?}p1, {?}]>}
func.func @priorities(%small: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}p1]>},
                      %big: tensor<8x64xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}p2, {}]>})
    -> tensor<8x64xf32> {
  %0 = tessel.add %small, %small : tensor<8xf32>
  %1 = tessel.broadcast_in_dim %0, dims = [0] : (tensor<8xf32>) -> tensor<8x64xf32>
  %2 = tessel.add %1, %big : tensor<8x64xf32>
  return %2 : tensor<8x64xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests the size heuristic without priorities: a broadcast's operand and
// result disagree on their shared factor (tp on the 64-element operand, dp on
// the 512-element result, from a larger neighbour); the larger tensor's
// sharding wins and the operand's closed annotation stays as written.
// EXPLAIN: conflict at 'tessel.add' ({{.*}}), factor 0: kept {"tp"} of operand #0 (p1) over {"dp"} of operand #1 (p2): higher priority
// EXPLAIN-NOT: conflict at 'tessel.add'
// EXPLAIN: conflict at 'tessel.broadcast_in_dim' ({{.*}}), factor 0: kept {"dp"} of result #0 over {"tp"} of operand #0: larger tensor (512 vs 64 elements)
// CHECK-LABEL: func.func @conflict_by_size
// CHECK: tessel.broadcast_in_dim {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
// CHECK: tessel.add {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
func.func @conflict_by_size(%small: tensor<64xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>},
                            %big: tensor<64x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<64x8xf32> {
  %0 = tessel.broadcast_in_dim %small, dims = [0] : (tensor<64xf32>) -> tensor<64x8xf32>
  %1 = tessel.add %0, %big : tensor<64x8xf32>
  return %1 : tensor<64x8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that an axis is never used twice in one tensor: dp reaches both
// dimensions of the add; only the first keeps it.
// CHECK-LABEL: func.func @axis_once
// CHECK: tessel.add {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
func.func @axis_once(%a: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {?}]>},
                     %b: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {"dp"}]>}) -> tensor<8x8xf32> {
  %0 = tessel.add %a, %b : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that values nothing reaches are replicated (open) on the mesh, and
// that scalars get an empty sharding.
// CHECK-LABEL: func.func @unreached
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{?}]>}
// CHECK: tessel.reduce sum {{.*}}{tessel.sharding = #tessel.sharding<@mesh, []>}
func.func @unreached(%a: tensor<8xf32>) -> tensor<f32> {
  %0 = tessel.reduce sum %a, dims = [0] : (tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests several axes on one dimension and their extension.
// CHECK-LABEL: func.func @multi_axis
// CHECK-SAME: {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp", ?}]>}
// CHECK: tessel.neg {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}]>}
func.func @multi_axis(%a: tensor<64xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}]>}) -> (tensor<64xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}]>}) {
  %0 = tessel.neg %a : tensor<64xf32>
  return %0 : tensor<64xf32>
}
