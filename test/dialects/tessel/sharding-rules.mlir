// RUN: tessel-opt %s --tessel-test-print-sharding-rules -verify-diagnostics -o /dev/null

// The sharding rule of every tessel op (ops.mlir's programs). Factors are
// named in order of first appearance, results first.


tessel.mesh @mesh ["dp"=2, "tp"=4]
tessel.mesh @ring ["x"=4] devices = [3, 2, 1, 0]
tessel.mesh @cube ["pp"=2, "dp"=2, "tp"=2]

// Tests that shardings on arguments and results, with open dimensions,
// several axes on one dimension and priorities, round-trip.
func.func @shardings(
    %a: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp", ?}p1]>},
    %b: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>},
    %s: tensor<f32> {tessel.sharding = #tessel.sharding<@cube, []>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {}p0]>}) {
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=8, j=16}>}}
  %0 = tessel.sharding_constraint %a <@mesh, [{"tp"}, {"dp", ?}p2]> : tensor<8x16xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=8, j=16}>}}
  %1 = tessel.add %0, %b {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>} : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// Tests that names and logical axis tags round-trip.
func.func @names(%w: tensor<4x8xf32> {tessel.name = "h.0.mlp.c_fc.weight", tessel.logical_axes = ["embed", "mlp"]}) -> tensor<4x8xf32> {
  return %w : tensor<4x8xf32>
}

// Tests tensor creation.
func.func @creation() -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<2xbf16>, tensor<3xi1>) {
  // expected-remark@+1 {{#tessel.rule<() -> ([i, j]) {i=4, j=8}>}}
  %c = tessel.constant dense<0.5> : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<() -> ([i, j]) {i=4, j=8}>}}
  %i = tessel.iota dim = 1 : tensor<4x8xi32>
  // expected-remark@+1 {{#tessel.rule<() -> ([i]) {i=2}>}}
  %h = tessel.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  // expected-remark@+1 {{#tessel.rule<() -> ([i]) {i=3}>}}
  %p = tessel.constant dense<[true, false, true]> : tensor<3xi1>
  return %c, %i, %h, %p : tensor<4x8xf32>, tensor<4x8xi32>, tensor<2xbf16>, tensor<3xi1>
}

// Tests every unary elementwise op.
func.func @unary(%x: tensor<4x8xf32>, %n: tensor<4xi32>) -> tensor<4x8xf32> {
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %0 = tessel.neg %x : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %1 = tessel.abs %0 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %2 = tessel.exp %1 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %3 = tessel.log %2 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %4 = tessel.sqrt %3 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %5 = tessel.rsqrt %4 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %6 = tessel.tanh %5 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %7 = tessel.logistic %6 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %8 = tessel.relu %7 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %9 = tessel.gelu %8 approximation = tanh : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %10 = tessel.gelu %9 approximation = erf : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %11 = tessel.silu %10 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %12 = tessel.sin %11 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>}}
  %13 = tessel.cos %12 : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %14 = tessel.neg %n : tensor<4xi32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %15 = tessel.abs %14 : tensor<4xi32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %16 = tessel.relu %15 : tensor<4xi32>
  return %13 : tensor<4x8xf32>
}

// Tests conversions between every pair of element type families.
func.func @convert(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>) {
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %0 = tessel.convert %x : (tensor<4xf32>) -> tensor<4xbf16>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %1 = tessel.convert %0 : (tensor<4xbf16>) -> tensor<4xf16>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %2 = tessel.convert %1 : (tensor<4xf16>) -> tensor<4xf64>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %3 = tessel.convert %i : (tensor<4xi64>) -> tensor<4xi32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %4 = tessel.convert %3 : (tensor<4xi32>) -> tensor<4xi1>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4}>}}
  %5 = tessel.convert %4 : (tensor<4xi1>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xbf16>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>
}

// Tests every binary elementwise op, compare and select.
func.func @binary(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi64>) -> tensor<4x8xf32> {
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %0 = tessel.add %x, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %1 = tessel.sub %0, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %2 = tessel.mul %1, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %3 = tessel.div %2, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %4 = tessel.max %3, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %5 = tessel.min %4, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %6 = tessel.pow %5, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %7 = tessel.div %i, %i : tensor<4x8xi64>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %m = tessel.compare lt, %6, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %e = tessel.compare eq, %7, %i : tensor<4x8xi64>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %c1 = tessel.compare ne, %x, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %c2 = tessel.compare le, %x, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %c3 = tessel.compare gt, %x, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %c4 = tessel.compare ge, %x, %y : tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j], [i, j]) -> ([i, j]) {i=4, j=8}>}}
  %s = tessel.select %m, %6, %x : tensor<4x8xi1>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// Tests the shape-manipulating ops.
func.func @shapes(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x12xf32> {
  // expected-remark@+1 {{#tessel.rule<([j]) -> ([i, j]) {i=4, j=8}>}}
  %0 = tessel.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, k]) -> ([i, j, k]) {i=4, j=3, k=8}>}}
  %1 = tessel.broadcast_in_dim %0, dims = [0, 2] : (tensor<4x8xf32>) -> tensor<4x3x8xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k]) -> ([ij, k]) {i=4, j=3, k=8}>}}
  %2 = tessel.reshape %1 : (tensor<4x3x8xf32>) -> tensor<12x8xf32>
  // expected-remark@+1 {{#tessel.rule<([j, i]) -> ([i, j]) {i=8, j=12}>}}
  %3 = tessel.transpose %2, permutation = [1, 0] : (tensor<12x8xf32>) -> tensor<8x12xf32>
  // expected-remark@+1 {{#tessel.rule<([i, k]) -> ([i, j]) {i=4, j=5, k=12} need_replication={k} permutation={i}>}}
  %4 = tessel.slice %3, start = [0, 2], limit = [4, 12], strides = [1, 2] : (tensor<8x12xf32>) -> tensor<4x5xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=10} permutation={j}>}}
  %5 = tessel.concatenate %4, %4 dim = 1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x10xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j]) {i=4, j=12} permutation={j}>}}
  %6 = tessel.pad %5, low = [0, 1], high = [0, 1], value = 0xFFF0000000000000 : (tensor<4x10xf32>) -> tensor<4x12xf32>
  return %6 : tensor<4x12xf32>
}

// Tests contractions and reductions.
func.func @contractions(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>) -> (tensor<4xf32>, tensor<2x4x4xf32>, tensor<f32>) {
  // expected-remark@+1 {{#tessel.rule<([i, k], [k, j]) -> ([i, j]) {i=4, j=16, k=8} reduction={k}>}}
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, l], [i, l, k]) -> ([i, j, k]) {i=2, j=4, k=4, l=8} reduction={l}>}}
  %1 = tessel.dot_general %q, %k, batching = [0] x [0], contracting = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i]) {i=4, j=16} reduction={j}>}}
  %2 = tessel.reduce sum %0, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i]) {i=4, j=16} reduction={j}>}}
  %3 = tessel.reduce max %0, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([]) {i=4} reduction={i}>}}
  %4 = tessel.reduce min %3, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k]) -> ([]) {i=2, j=4, k=4} reduction={i, j, k}>}}
  %5 = tessel.reduce mean %1, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<f32>
  // expected-remark@+1 {{#tessel.rule<([i]) -> ([i]) {i=4} need_replication={i}>}}
  %6 = tessel.cumsum %2, dim = 0 : tensor<4xf32>
  return %6, %1, %5 : tensor<4xf32>, tensor<2x4x4xf32>, tensor<f32>
}

// Tests the neural-network ops.
func.func @nn(%x: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
              %wte: tensor<256x64xf32>, %tokens: tensor<4x16xi32>,
              %logits: tensor<4x16x256xf32>, %seed: tensor<i64>)
    -> (tensor<f32>, tensor<4x16xf32>, tensor<256x64xf32>) {
  // expected-remark@+1 {{#tessel.rule<([i, j, k]) -> ([i, j, k]) {i=4, j=16, k=64} need_replication={k}>}}
  %0 = tessel.softmax %x, dim = 2 : tensor<4x16x64xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k], [k], [k]) -> ([i, j, k]) {i=4, j=16, k=64} need_replication={k}>}}
  %1 = tessel.layer_norm %0, %g, %b, epsilon = 1.0e-05 : tensor<4x16x64xf32>, tensor<64xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k], [k]) -> ([i, j, k]) {i=4, j=16, k=64} need_replication={k}>}}
  %2 = tessel.rms_norm %1, %g, epsilon = 1.0e-06 : tensor<4x16x64xf32>, tensor<64xf32>
  // expected-remark@+1 {{#tessel.rule<([l, k], [i, j]) -> ([i, j, k]) {i=4, j=16, k=64, l=256} reduction={l}>}}
  %3 = tessel.gather %wte[%tokens], axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j], [k, l], [k, l, j]) -> ([i, j]) {i=256, j=64, k=4, l=16} reduction={k, l}>}}
  %4 = tessel.scatter_add %wte[%tokens], %3, axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>, tensor<4x16x64xf32>) -> tensor<256x64xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j]) -> ([i, j, k]) {i=4, j=16, k=256}>}}
  %5 = tessel.one_hot %tokens : (tensor<4x16xi32>) -> tensor<4x16x256xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, l]) -> ([i, j, k], [i, j, k]) {i=4, j=16, k=2, l=256} need_replication={l}>}}
  %6:2 = tessel.top_k %5, k = 2 : (tensor<4x16x256xf32>) -> (tensor<4x16x2xf32>, tensor<4x16x2xi32>)
  // expected-remark@+1 {{#tessel.rule<([]) -> ([i, j, k]) {i=4, j=16, k=64}>}}
  %7 = tessel.dropout_mask %seed, rate = 0.1 : (tensor<i64>) -> tensor<4x16x64xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k], [i, j]) -> ([]) {i=4, j=16, k=256} reduction={i, j, k}>}}
  %8 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -100, reduction = mean : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k], [i, j]) -> ([i, j]) {i=4, j=16, k=256} reduction={k}>}}
  %9 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -1, reduction = none : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<4x16xf32>
  // expected-remark@+1 {{#tessel.rule<([i, j, k], [i, j]) -> ([]) {i=4, j=16, k=256} reduction={i, j, k}>}}
  %10 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -1, reduction = sum : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  return %8, %9, %4 : tensor<f32>, tensor<4x16xf32>, tensor<256x64xf32>
}

// Tests every collective.
func.func @collectives(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-remark@+1 {{no sharding rule}}
  %0 = tessel.all_reduce sum %x on @mesh ["tp"] : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %1 = tessel.all_reduce max %0 on @mesh ["dp", "tp"] : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %2 = tessel.all_reduce min %1 on @mesh ["dp"] : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %3 = tessel.all_gather %2 on @mesh ["dp"], dim = 0 : (tensor<4x16xf32>) -> tensor<8x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %4 = tessel.reduce_scatter sum %3 on @mesh ["dp"], dim = 0 : (tensor<8x16xf32>) -> tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %5 = tessel.all_to_all %4 on @mesh ["tp"], split_dim = 1, concat_dim = 0 : (tensor<4x16xf32>) -> tensor<16x4xf32>
  // expected-remark@+1 {{no sharding rule}}
  %6 = tessel.all_to_all %5 on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<16x4xf32>) -> tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %7 = tessel.collective_permute %6 on @ring ["x"], pairs = [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  tessel.send %7 on @cube ["pp"], target = 1, channel = 0 : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %8 = tessel.recv on @cube ["pp"], source = 0, channel = 0 : tensor<4x16xf32>
  // expected-remark@+1 {{no sharding rule}}
  %9 = tessel.axis_index on @mesh ["dp", "tp"] : tensor<i32>
  return %8 : tensor<4x16xf32>
}
