// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt | FileCheck %s

// Round trip of every tessel op and attribute: parse, print, parse again.

// CHECK: tessel.mesh @mesh ["dp"=2, "tp"=4]
tessel.mesh @mesh ["dp"=2, "tp"=4]
// CHECK: tessel.mesh @ring ["x"=4] devices = [3, 2, 1, 0]
tessel.mesh @ring ["x"=4] devices = [3, 2, 1, 0]
// CHECK: tessel.mesh @cube ["pp"=2, "dp"=2, "tp"=2]
tessel.mesh @cube ["pp"=2, "dp"=2, "tp"=2]

// Tests that shardings on arguments and results, with open dimensions,
// several axes on one dimension and priorities, round-trip.
// CHECK-LABEL: func.func @shardings
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp", ?}p1]>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@cube, []>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{?}, {}p0]>
func.func @shardings(
    %a: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp", ?}p1]>},
    %b: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>},
    %s: tensor<f32> {tessel.sharding = #tessel.sharding<@cube, []>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {}p0]>}) {
  // CHECK: tessel.sharding_constraint %{{.*}} <@mesh, [{"tp"}, {"dp", ?}p2]> : tensor<8x16xf32>
  %0 = tessel.sharding_constraint %a <@mesh, [{"tp"}, {"dp", ?}p2]> : tensor<8x16xf32>
  // CHECK: tessel.add {{.*}} {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}
  %1 = tessel.add %0, %b {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>} : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// Tests that sub-axes round-trip: "tp" (4 devices) as its halves, each in
// another dimension, and a minor half beside a whole axis; in the generic
// form a sub-axis is the axis name "tp:(2)2".
// CHECK-LABEL: func.func @sub_axes
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)2}, {"dp", "tp":(2)2}]>
// CHECK: tessel.all_gather %{{.*}} on @mesh ["tp:(2)2"], dim = 1 : (tensor<8x16xf32>) -> tensor<8x32xf32>
func.func @sub_axes(
    %a: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)2}, {"dp", "tp":(2)2}]>})
    -> tensor<8x32xf32> {
  %0 = tessel.all_gather %a on @mesh ["tp:(2)2"], dim = 1 : (tensor<8x16xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// Tests that names and logical axis tags round-trip.
// CHECK-LABEL: func.func @names
// CHECK-SAME: tessel.logical_axes = ["embed", "mlp"], tessel.name = "h.0.mlp.c_fc.weight"
func.func @names(%w: tensor<4x8xf32> {tessel.name = "h.0.mlp.c_fc.weight", tessel.logical_axes = ["embed", "mlp"]}) -> tensor<4x8xf32> {
  return %w : tensor<4x8xf32>
}

// Tests tensor creation.
// CHECK-LABEL: func.func @creation
func.func @creation() -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<2xbf16>, tensor<3xi1>) {
  // CHECK: %[[C:.*]] = tessel.constant dense<5.000000e-01> : tensor<4x8xf32>
  %c = tessel.constant dense<0.5> : tensor<4x8xf32>
  // CHECK: tessel.iota dim = 1 : tensor<4x8xi32>
  %i = tessel.iota dim = 1 : tensor<4x8xi32>
  // CHECK: tessel.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
  %h = tessel.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  // CHECK: tessel.constant dense<[true, false, true]> : tensor<3xi1>
  %p = tessel.constant dense<[true, false, true]> : tensor<3xi1>
  return %c, %i, %h, %p : tensor<4x8xf32>, tensor<4x8xi32>, tensor<2xbf16>, tensor<3xi1>
}

// Tests every unary elementwise op.
// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %n: tensor<4xi32>) -> tensor<4x8xf32> {
  // CHECK: tessel.neg %{{.*}} : tensor<4x8xf32>
  %0 = tessel.neg %x : tensor<4x8xf32>
  // CHECK: tessel.abs %{{.*}} : tensor<4x8xf32>
  %1 = tessel.abs %0 : tensor<4x8xf32>
  // CHECK: tessel.exp
  %2 = tessel.exp %1 : tensor<4x8xf32>
  // CHECK: tessel.log
  %3 = tessel.log %2 : tensor<4x8xf32>
  // CHECK: tessel.sqrt
  %4 = tessel.sqrt %3 : tensor<4x8xf32>
  // CHECK: tessel.rsqrt
  %5 = tessel.rsqrt %4 : tensor<4x8xf32>
  // CHECK: tessel.tanh
  %6 = tessel.tanh %5 : tensor<4x8xf32>
  // CHECK: tessel.logistic
  %7 = tessel.logistic %6 : tensor<4x8xf32>
  // CHECK: tessel.relu
  %8 = tessel.relu %7 : tensor<4x8xf32>
  // CHECK: tessel.gelu %{{.*}} approximation = tanh : tensor<4x8xf32>
  %9 = tessel.gelu %8 approximation = tanh : tensor<4x8xf32>
  // CHECK: tessel.gelu %{{.*}} approximation = erf : tensor<4x8xf32>
  %10 = tessel.gelu %9 approximation = erf : tensor<4x8xf32>
  // CHECK: tessel.silu
  %11 = tessel.silu %10 : tensor<4x8xf32>
  // CHECK: tessel.sin
  %12 = tessel.sin %11 : tensor<4x8xf32>
  // CHECK: tessel.cos
  %13 = tessel.cos %12 : tensor<4x8xf32>
  // CHECK: tessel.neg %{{.*}} : tensor<4xi32>
  %14 = tessel.neg %n : tensor<4xi32>
  // CHECK: tessel.abs %{{.*}} : tensor<4xi32>
  %15 = tessel.abs %14 : tensor<4xi32>
  // CHECK: tessel.relu %{{.*}} : tensor<4xi32>
  %16 = tessel.relu %15 : tensor<4xi32>
  return %13 : tensor<4x8xf32>
}

// Tests conversions between every pair of element type families.
// CHECK-LABEL: func.func @convert
func.func @convert(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>) {
  // CHECK: tessel.convert %{{.*}} : (tensor<4xf32>) -> tensor<4xbf16>
  %0 = tessel.convert %x : (tensor<4xf32>) -> tensor<4xbf16>
  // CHECK: tessel.convert %{{.*}} : (tensor<4xbf16>) -> tensor<4xf16>
  %1 = tessel.convert %0 : (tensor<4xbf16>) -> tensor<4xf16>
  // CHECK: tessel.convert %{{.*}} : (tensor<4xf16>) -> tensor<4xf64>
  %2 = tessel.convert %1 : (tensor<4xf16>) -> tensor<4xf64>
  // CHECK: tessel.convert %{{.*}} : (tensor<4xi64>) -> tensor<4xi32>
  %3 = tessel.convert %i : (tensor<4xi64>) -> tensor<4xi32>
  // CHECK: tessel.convert %{{.*}} : (tensor<4xi32>) -> tensor<4xi1>
  %4 = tessel.convert %3 : (tensor<4xi32>) -> tensor<4xi1>
  // CHECK: tessel.convert %{{.*}} : (tensor<4xi1>) -> tensor<4xf32>
  %5 = tessel.convert %4 : (tensor<4xi1>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xbf16>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>
}

// Tests every binary elementwise op, compare and select.
// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi64>) -> tensor<4x8xf32> {
  // CHECK: tessel.add %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %0 = tessel.add %x, %y : tensor<4x8xf32>
  // CHECK: tessel.sub
  %1 = tessel.sub %0, %y : tensor<4x8xf32>
  // CHECK: tessel.mul
  %2 = tessel.mul %1, %y : tensor<4x8xf32>
  // CHECK: tessel.div
  %3 = tessel.div %2, %y : tensor<4x8xf32>
  // CHECK: tessel.max
  %4 = tessel.max %3, %y : tensor<4x8xf32>
  // CHECK: tessel.min
  %5 = tessel.min %4, %y : tensor<4x8xf32>
  // CHECK: tessel.pow
  %6 = tessel.pow %5, %y : tensor<4x8xf32>
  // CHECK: tessel.div %{{.*}}, %{{.*}} : tensor<4x8xi64>
  %7 = tessel.div %i, %i : tensor<4x8xi64>
  // CHECK: %[[M:.*]] = tessel.compare lt, %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %m = tessel.compare lt, %6, %y : tensor<4x8xf32>
  // CHECK: tessel.compare eq, %{{.*}}, %{{.*}} : tensor<4x8xi64>
  %e = tessel.compare eq, %7, %i : tensor<4x8xi64>
  // CHECK: tessel.compare ne
  %c1 = tessel.compare ne, %x, %y : tensor<4x8xf32>
  // CHECK: tessel.compare le
  %c2 = tessel.compare le, %x, %y : tensor<4x8xf32>
  // CHECK: tessel.compare gt
  %c3 = tessel.compare gt, %x, %y : tensor<4x8xf32>
  // CHECK: tessel.compare ge
  %c4 = tessel.compare ge, %x, %y : tensor<4x8xf32>
  // CHECK: tessel.select %[[M]], %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
  %s = tessel.select %m, %6, %x : tensor<4x8xi1>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// Tests the shape-manipulating ops.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x12xf32> {
  // CHECK: tessel.broadcast_in_dim %{{.*}}, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %0 = tessel.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: tessel.broadcast_in_dim %{{.*}}, dims = [0, 2] : (tensor<4x8xf32>) -> tensor<4x3x8xf32>
  %1 = tessel.broadcast_in_dim %0, dims = [0, 2] : (tensor<4x8xf32>) -> tensor<4x3x8xf32>
  // CHECK: tessel.reshape %{{.*}} : (tensor<4x3x8xf32>) -> tensor<12x8xf32>
  %2 = tessel.reshape %1 : (tensor<4x3x8xf32>) -> tensor<12x8xf32>
  // CHECK: tessel.transpose %{{.*}}, permutation = [1, 0] : (tensor<12x8xf32>) -> tensor<8x12xf32>
  %3 = tessel.transpose %2, permutation = [1, 0] : (tensor<12x8xf32>) -> tensor<8x12xf32>
  // CHECK: tessel.slice %{{.*}}, start = [0, 2], limit = [4, 12], strides = [1, 2] : (tensor<8x12xf32>) -> tensor<4x5xf32>
  %4 = tessel.slice %3, start = [0, 2], limit = [4, 12], strides = [1, 2] : (tensor<8x12xf32>) -> tensor<4x5xf32>
  // CHECK: tessel.concatenate %{{.*}}, %{{.*}} dim = 1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x10xf32>
  %5 = tessel.concatenate %4, %4 dim = 1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x10xf32>
  // CHECK: tessel.pad %{{.*}}, low = [0, 1], high = [0, 1], value = 0xFFF0000000000000 : (tensor<4x10xf32>) -> tensor<4x12xf32>
  %6 = tessel.pad %5, low = [0, 1], high = [0, 1], value = 0xFFF0000000000000 : (tensor<4x10xf32>) -> tensor<4x12xf32>
  return %6 : tensor<4x12xf32>
}

// Tests contractions and reductions.
// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>) -> (tensor<4xf32>, tensor<2x4x4xf32>, tensor<f32>) {
  // CHECK: tessel.dot_general %{{.*}}, %{{.*}}, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: tessel.dot_general %{{.*}}, %{{.*}}, batching = [0] x [0], contracting = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %1 = tessel.dot_general %q, %k, batching = [0] x [0], contracting = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // CHECK: tessel.reduce sum %{{.*}}, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  %2 = tessel.reduce sum %0, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  // CHECK: tessel.reduce max
  %3 = tessel.reduce max %0, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  // CHECK: tessel.reduce min
  %4 = tessel.reduce min %3, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  // CHECK: tessel.reduce mean %{{.*}}, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<f32>
  %5 = tessel.reduce mean %1, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<f32>
  // CHECK: tessel.cumsum %{{.*}}, dim = 0 : tensor<4xf32>
  %6 = tessel.cumsum %2, dim = 0 : tensor<4xf32>
  return %6, %1, %5 : tensor<4xf32>, tensor<2x4x4xf32>, tensor<f32>
}

// Tests the neural-network ops.
// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
              %wte: tensor<256x64xf32>, %tokens: tensor<4x16xi32>,
              %logits: tensor<4x16x256xf32>, %seed: tensor<i64>)
    -> (tensor<f32>, tensor<4x16xf32>, tensor<256x64xf32>) {
  // CHECK: tessel.softmax %{{.*}}, dim = 2 : tensor<4x16x64xf32>
  %0 = tessel.softmax %x, dim = 2 : tensor<4x16x64xf32>
  // CHECK: tessel.layer_norm %{{.*}}, %{{.*}}, %{{.*}}, epsilon = 1.000000e-05 : tensor<4x16x64xf32>, tensor<64xf32>
  %1 = tessel.layer_norm %0, %g, %b, epsilon = 1.0e-05 : tensor<4x16x64xf32>, tensor<64xf32>
  // CHECK: tessel.rms_norm %{{.*}}, %{{.*}}, epsilon = {{9.9+[0-9]*E-7}} : tensor<4x16x64xf32>, tensor<64xf32>
  %2 = tessel.rms_norm %1, %g, epsilon = 1.0e-06 : tensor<4x16x64xf32>, tensor<64xf32>
  // CHECK: tessel.gather %{{.*}}[%{{.*}}], axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
  %3 = tessel.gather %wte[%tokens], axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
  // CHECK: tessel.scatter_add %{{.*}}[%{{.*}}], %{{.*}}, axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>, tensor<4x16x64xf32>) -> tensor<256x64xf32>
  %4 = tessel.scatter_add %wte[%tokens], %3, axis = 0 : (tensor<256x64xf32>, tensor<4x16xi32>, tensor<4x16x64xf32>) -> tensor<256x64xf32>
  // CHECK: tessel.one_hot %{{.*}} : (tensor<4x16xi32>) -> tensor<4x16x256xf32>
  %5 = tessel.one_hot %tokens : (tensor<4x16xi32>) -> tensor<4x16x256xf32>
  // CHECK: tessel.top_k %{{.*}}, k = 2 : (tensor<4x16x256xf32>) -> (tensor<4x16x2xf32>, tensor<4x16x2xi32>)
  %6:2 = tessel.top_k %5, k = 2 : (tensor<4x16x256xf32>) -> (tensor<4x16x2xf32>, tensor<4x16x2xi32>)
  // CHECK: tessel.dropout_mask %{{.*}}, rate = 1.000000e-01 : (tensor<i64>) -> tensor<4x16x64xf32>
  %7 = tessel.dropout_mask %seed, rate = 0.1 : (tensor<i64>) -> tensor<4x16x64xf32>
  // CHECK: tessel.softmax_cross_entropy %{{.*}}, %{{.*}}, ignore_index = -100, reduction = mean : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  %8 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -100, reduction = mean : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  // CHECK: reduction = none : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<4x16xf32>
  %9 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -1, reduction = none : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<4x16xf32>
  // CHECK: reduction = sum
  %10 = tessel.softmax_cross_entropy %logits, %tokens, ignore_index = -1, reduction = sum : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  return %8, %9, %4 : tensor<f32>, tensor<4x16xf32>, tensor<256x64xf32>
}

// Tests every collective.
// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: tessel.all_reduce sum %{{.*}} on @mesh ["tp"] : tensor<4x16xf32>
  %0 = tessel.all_reduce sum %x on @mesh ["tp"] : tensor<4x16xf32>
  // CHECK: tessel.all_reduce max %{{.*}} on @mesh ["dp", "tp"] : tensor<4x16xf32>
  %1 = tessel.all_reduce max %0 on @mesh ["dp", "tp"] : tensor<4x16xf32>
  // CHECK: tessel.all_reduce min
  %2 = tessel.all_reduce min %1 on @mesh ["dp"] : tensor<4x16xf32>
  // CHECK: tessel.all_gather %{{.*}} on @mesh ["dp"], dim = 0 : (tensor<4x16xf32>) -> tensor<8x16xf32>
  %3 = tessel.all_gather %2 on @mesh ["dp"], dim = 0 : (tensor<4x16xf32>) -> tensor<8x16xf32>
  // CHECK: tessel.reduce_scatter sum %{{.*}} on @mesh ["dp"], dim = 0 : (tensor<8x16xf32>) -> tensor<4x16xf32>
  %4 = tessel.reduce_scatter sum %3 on @mesh ["dp"], dim = 0 : (tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: tessel.shard_slice %{{.*}} on @mesh ["tp"], dim = 1 : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %s = tessel.shard_slice %3 on @mesh ["tp"], dim = 1 : (tensor<8x16xf32>) -> tensor<8x4xf32>
  // CHECK: tessel.all_to_all %{{.*}} on @mesh ["tp"], split_dim = 1, concat_dim = 0 : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %5 = tessel.all_to_all %4 on @mesh ["tp"], split_dim = 1, concat_dim = 0 : (tensor<4x16xf32>) -> tensor<16x4xf32>
  // CHECK: tessel.all_to_all %{{.*}} on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<16x4xf32>) -> tensor<4x16xf32>
  %6 = tessel.all_to_all %5 on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<16x4xf32>) -> tensor<4x16xf32>
  // CHECK: tessel.collective_permute %{{.*}} on @ring ["x"], pairs = [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x16xf32>
  %7 = tessel.collective_permute %6 on @ring ["x"], pairs = [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x16xf32>
  // CHECK: tessel.send %{{.*}} on @cube ["pp"], target = 1, channel = 0 : tensor<4x16xf32>
  tessel.send %7 on @cube ["pp"], target = 1, channel = 0 : tensor<4x16xf32>
  // CHECK: tessel.recv on @cube ["pp"], source = 0, channel = 0 : tensor<4x16xf32>
  %8 = tessel.recv on @cube ["pp"], source = 0, channel = 0 : tensor<4x16xf32>
  // CHECK: tessel.axis_index on @mesh ["dp", "tp"] : tensor<i32>
  %9 = tessel.axis_index on @mesh ["dp", "tp"] : tensor<i32>
  return %8 : tensor<4x16xf32>
}
