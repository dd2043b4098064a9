// RUN: tessel-opt %s -split-input-file -verify-diagnostics

// One case per line of the Constraints lists in the ops' and attributes'
// descriptions (TesselOps.td, TesselAttrs.td).

// Meshes ---------------------------------------------------------------
// Tests: at least one axis.
// expected-error@+1 {{'tessel.mesh' op needs at least one axis}}
tessel.mesh @m []
// -----
// Tests: axis names are unique.
// expected-error@+1 {{'tessel.mesh' op has axis "x" twice}}
tessel.mesh @m ["x"=2, "x"=2]
// -----
// Tests: axis names are not empty.
// expected-error@+1 {{'tessel.mesh' op has an axis with an empty name}}
tessel.mesh @m [""=2]
// -----
// Tests: every axis size is at least 1.
// expected-error@+1 {{'tessel.mesh' op axis "x" has size 0; every axis needs at least one device}}
tessel.mesh @m ["x"=0]
// -----
// Tests: an explicit device list has one entry per device.
// expected-error@+1 {{'tessel.mesh' op device list has 3 entries but the mesh has 4 devices}}
tessel.mesh @m ["x"=2, "y"=2] devices = [0, 1, 2]
// -----
// Tests: an explicit device list holds distinct ranks.
// expected-error@+1 {{'tessel.mesh' op device list must hold distinct, non-negative ranks; rank 1 repeats}}
tessel.mesh @m ["x"=2] devices = [1, 1]
// -----
// Tests: an explicit device list holds non-negative ranks.
// expected-error@+1 {{'tessel.mesh' op device list must hold distinct, non-negative ranks; rank -1 is negative}}
tessel.mesh @m ["x"=2] devices = [0, -1]
// -----
// Shardings ------------------------------------------------------------
// Tests: no mesh axis appears twice in one sharding.
tessel.mesh @mesh ["dp"=2, "tp"=2]
// expected-error@+1 {{mesh axis "dp" is used twice (dimensions 0 and 1); a tensor can be split over an axis once}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"dp"}]>}) { return }
// -----
// Tests: a sharding's mesh exists.
// expected-error@+1 {{'func.func' op refers to mesh @nomesh, which is not defined; declare it with `tessel.mesh @nomesh [...]` in th}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@nomesh, [{}, {}]>}) { return }
// -----
// Tests: a sharding names only axes of its mesh.
tessel.mesh @mesh ["dp"=2]
// expected-error@+1 {{'func.func' op sharding of argument #0 names axis "tp" (dimension 0), which mesh @mesh does not have}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) { return }
// -----
// Tests: a sharding has one entry per dimension.
tessel.mesh @mesh ["dp"=2]
// expected-error@+1 {{'func.func' op sharding of argument #0 has 1 dimension(s) but argument #0 has rank 2 ('tensor<4x4xf32>')}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>}) { return }
// -----
// Tests: the same rules hold for result shardings.
tessel.mesh @mesh ["dp"=2]
// expected-error@+1 {{'func.func' op sharding of result #0 has 2 dimension(s) but result #0 has rank 1 ('tensor<4xf32>')}}
func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}) { return %a : tensor<4xf32> }
// -----
// Tests: a priority is written pN.
tessel.mesh @mesh ["dp"=2]
// expected-error@+1 {{expected a priority like 'p0' after a dimension sharding}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}q1]>}) { return }
// -----
// Tests: an op's tessel.sharding gives one sharding per result.
tessel.mesh @mesh ["dp"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.sharding' gives 2 value(s) for 1 result(s)}}
  %0 = tessel.neg %a {tessel.sharding = [#tessel.sharding<@mesh, [{"dp"}]>, #tessel.sharding<@mesh, [{}]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: a sub-axis overlapping its whole axis is an axis used twice.
tessel.mesh @mesh ["dp"=2, "tp"=4]
// expected-error@+1 {{mesh axes "tp" and "tp:(2)2" (they overlap) are used twice (dimensions 0 and 1)}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {"tp":(2)2}]>}) { return }
// -----
// Tests: overlapping sub-axes of one axis are refused.
tessel.mesh @mesh ["dp"=2, "tp"=8]
// expected-error@+1 {{mesh axes "tp:(1)4" and "tp:(2)2" (they overlap) are both listed in dimension 0}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)4, "tp":(2)2}, {}]>}) { return }
// -----
// Tests: sub-axes that cut their axis two ways (2 x 3 and 3 x 2) are refused.
tessel.mesh @mesh ["y"=6]
// expected-error@+1 {{mesh axes "y:(1)2" and "y:(3)2" (they do not nest: they cut the axis two different ways) are used twice (dimensions 0 and 1)}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"y":(1)2}, {"y":(3)2}]>}) { return }
// -----
// Tests: a sub-axis has at least two devices.
tessel.mesh @mesh ["tp"=4]
// expected-error@+1 {{sharding axis "tp:(2)1" is neither an axis name nor a sub-axis "a":(k)m with k >= 1 and m >= 2}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(2)1}]>}) { return }
// -----
// Tests: a sub-axis divides its axis.
tessel.mesh @mesh ["tp"=6]
// expected-error@+1 {{sharding of argument #0 names axis "tp:(2)2" (dimension 0), which mesh @mesh cannot split that way (a sub-axis (k)m needs k*m to divide the axis)}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(2)2}]>}) { return }
// -----
// Tests: sub-axes are written canonically: the whole axis as itself, ...
tessel.mesh @mesh ["tp"=4]
// expected-error@+1 {{names sub-axis "tp:(1)4" (dimension 0), which is all of axis "tp"; write the axis}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)4}]>}) { return }
// -----
// ... and sub-axes that continue each other as one.
tessel.mesh @mesh ["tp"=8]
// expected-error@+1 {{lists sub-axes "tp:(1)2" and "tp:(2)2" (dimension 0), which continue each other; write them as one}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)2, "tp":(2)2}]>}) { return }
// -----
// Tests: mesh axis names cannot be read as sub-axes.
// expected-error@+1 {{'tessel.mesh' op has an axis named "a:(1)2"; axis names use none of ':', '(' and ')'}}
tessel.mesh @m ["a:(1)2"=2]
// -----
// Tests: a collective over overlapping axes is refused.
tessel.mesh @mesh ["tp"=4]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op lists mesh axis "tp:(2)2" twice (it overlaps "tp")}}
  %0 = tessel.all_reduce sum %a on @mesh ["tp", "tp:(2)2"] : tensor<4xf32>
  return
}
// -----
// Tests: an axis listed twice within one dimension is named as such.
tessel.mesh @mesh ["dp"=2, "tp"=2]
// expected-error@+1 {{mesh axis "dp" is listed twice in dimension 0}}
func.func @f(%a: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "dp"}, {}]>}) { return }
// -----
// Tests: logical axes on an op describe its single result.
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'tessel.add' op 'tessel.logical_axes' on result #0 has 1 entries for a tensor of rank 2}}
  %0 = tessel.add %a, %a {tessel.logical_axes = ["a"]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// -----
// Tests: logical axes on an op with several results are rejected.
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'tessel.top_k' op 'tessel.logical_axes' gives 1 value(s) for 2 result(s)}}
  %0:2 = tessel.top_k %a, k = 2 {tessel.logical_axes = ["a", "b"]} : (tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return
}
// -----
// Tests: tessel.sharding must be a sharding.
// expected-error@+1 {{'func.func' op 'tessel.sharding' on argument #0 must be a #tessel.sharding, got "dp"}}
func.func @f(%a: tensor<4xf32> {tessel.sharding = "dp"}) { return }
// -----
// Tests: tessel.name is a non-empty string.
// expected-error@+1 {{'func.func' op 'tessel.name' on argument #0 must be a non-empty string}}
func.func @f(%a: tensor<4xf32> {tessel.name = 3}) { return }
// -----
// Tests: tessel.logical_axes has one entry per dimension.
// expected-error@+1 {{'func.func' op 'tessel.logical_axes' on argument #0 has 1 entries for a tensor of rank 2}}
func.func @f(%a: tensor<4x4xf32> {tessel.logical_axes = ["embed"]}) { return }
// -----
// Tests: unknown tessel attributes are rejected.
// expected-error@+1 {{'func.func' op unknown attribute 'tessel.shardng' on argument #0; the tessel dialect knows 'tessel.sharding', }}
func.func @f(%a: tensor<4xf32> {tessel.shardng = 1}) { return }
// -----
// Tests: sharding_constraint's mesh exists.
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.sharding_constraint' op refers to mesh @nomesh, which is not defined; declare it with `tessel.mesh @no}}
  %0 = tessel.sharding_constraint %a <@nomesh, [{}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: sharding_constraint's sharding has the operand's rank.
tessel.mesh @mesh ["dp"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.sharding_constraint' op sharding of the operand has 2 dimension(s) but the operand has rank 1 ('tensor}}
  %0 = tessel.sharding_constraint %a <@mesh, [{"dp"}, {}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: sharding_constraint names only mesh axes.
tessel.mesh @mesh ["dp"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.sharding_constraint' op sharding of the operand names axis "tp" (dimension 0), which mesh @mesh does n}}
  %0 = tessel.sharding_constraint %a <@mesh, [{"tp"}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Creation -------------------------------------------------------------
// Tests: a constant has a tessel element type.
func.func @f() {
  // expected-error@+1 {{'tessel.constant' op result #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit flo}}
  %0 = tessel.constant dense<1> : tensor<4xi8>
  return
}
// -----
// Tests: a constant is a tensor.
func.func @f() {
  // expected-error@+1 {{'tessel.constant' op result #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit flo}}
  %0 = tessel.constant dense<1.0> : vector<4xf32>
  return
}
// -----
// Tests: iota's result has rank at least 1.
func.func @f() {
  // expected-error@+1 {{'tessel.iota' op result must have rank at least 1}}
  %0 = tessel.iota dim = 0 : tensor<i32>
  return
}
// -----
// Tests: iota's dim is a dimension of the result.
func.func @f() {
  // expected-error@+1 {{'tessel.iota' op dim 2 is not a dimension of a rank-2 tensor}}
  %0 = tessel.iota dim = 2 : tensor<4x4xi32>
  return
}
// -----
// Tests: tensors have static shapes.
func.func @f(%a: tensor<?xf32>) {
  // expected-error@+1 {{'tessel.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float o}}
  %0 = tessel.exp %a : tensor<?xf32>
  return
}
// -----
// Elementwise ----------------------------------------------------------
// Tests: unary operand and result have the same type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.exp' op requires the same type for all operands and results}}
  %0 = "tessel.exp"(%a) : (tensor<4xf32>) -> tensor<4xf64>
  return
}
// -----
// Tests: transcendental ops need floats.
func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'tessel.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float o}}
  %0 = tessel.exp %a : tensor<4xi32>
  return
}
// -----
// Tests: gelu operand and result have the same type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.gelu' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "tessel.gelu"(%a) {approximation = 1 : i32} : (tensor<4xf32>) -> tensor<8xf32>
  return
}
// -----
// Tests: convert keeps the shape.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.convert' op all non-scalar operands/results must have the same shape and base type}}
  %0 = tessel.convert %a : (tensor<4xf32>) -> tensor<8xbf16>
  return
}
// -----
// Tests: binary operands have the same type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'tessel.add' op requires the same type for all operands and results}}
  %0 = "tessel.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
// -----
// Tests: operands are not broadcast implicitly.
func.func @f(%a: tensor<4xf32>, %b: tensor<1xf32>) {
  // expected-error@+1 {{'tessel.mul' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "tessel.mul"(%a, %b) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: pow needs floats.
func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'tessel.pow' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float o}}
  %0 = tessel.pow %a, %a : tensor<4xi32>
  return
}
// -----
// Tests: compare operands have the same type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'tessel.compare' op requires all operands to have the same type}}
  %0 = "tessel.compare"(%a, %b) {direction = 0 : i32} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}
// -----
// Tests: compare's result is i1 of the operands' shape.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tens}}
  %0 = "tessel.compare"(%a, %a) {direction = 0 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: select's branches and result have the same type.
func.func @f(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'tessel.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "tessel.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
// -----
// Tests: select's predicate has the result's shape.
func.func @f(%p: tensor<2xi1>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.select' op failed to verify that all of {pred, result} have same shape}}
  %0 = tessel.select %p, %a, %a : tensor<2xi1>, tensor<4xf32>
  return
}
// -----
// Shapes ---------------------------------------------------------------
// Tests: broadcast_in_dim's dims has one entry per operand dimension.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.broadcast_in_dim' op dims [0, 1] has 2 entries but the operand has rank 1}}
  %0 = tessel.broadcast_in_dim %a, dims = [0, 1] : (tensor<4xf32>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: broadcast_in_dim's dims are result dimensions.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.broadcast_in_dim' op dims [2] maps operand dimension 0 to 2, which is not a dimension of the rank-2 re}}
  %0 = tessel.broadcast_in_dim %a, dims = [2] : (tensor<4xf32>) -> tensor<3x4xf32>
  return
}
// -----
// Tests: broadcast_in_dim's dims are strictly increasing.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+1 {{'tessel.broadcast_in_dim' op dims [1, 0] must be strictly increasing (use tessel.transpose to reorder)}}
  %0 = tessel.broadcast_in_dim %a, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return
}
// -----
// Tests: broadcast_in_dim's sizes match or are 1.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.broadcast_in_dim' op operand dimension 0 (size 4) cannot broadcast to result dimension 0 (size 3); siz}}
  %0 = tessel.broadcast_in_dim %a, dims = [0] : (tensor<4xf32>) -> tensor<3x4xf32>
  return
}
// -----
// Tests: broadcast_in_dim keeps the element type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.broadcast_in_dim' op operand element type 'f32' differs from result element type 'f16'}}
  %0 = tessel.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf16>
  return
}
// -----
// Tests: reshape keeps the number of elements.
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'tessel.reshape' op operand 'tensor<4x4xf32>' has 16 elements but result 'tensor<15xf32>' has 15}}
  %0 = tessel.reshape %a : (tensor<4x4xf32>) -> tensor<15xf32>
  return
}
// -----
// Tests: reshape keeps the element type.
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'tessel.reshape' op operand element type 'f32' differs from result element type 'i32'}}
  %0 = tessel.reshape %a : (tensor<4x4xf32>) -> tensor<16xi32>
  return
}
// -----
// Tests: transpose's permutation is a permutation.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.transpose' op permutation [1, 1] lists dimension 1 twice}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.transpose %a, permutation = [1, 1] : (tensor<4x3xf32>) -> tensor<3x3xf32>
  return
}
// -----
// Tests: transpose's permutation has one entry per dimension.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.transpose' op permutation [0] has 1 entries for a rank-2 operand}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.transpose %a, permutation = [0] : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: transpose's result is the permuted type.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.transpose' op inferred type(s) 'tensor<3x4xf32>' are incompatible with return type(s) of operation 'te}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.transpose %a, permutation = [1, 0] : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----
// Tests: slice's start, limit and strides have one entry per dimension.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.slice' op start, limit and strides need 2 entries each (the operand's rank), got 1, 1 and 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.slice %a, start = [0], limit = [4], strides = [1] : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: slice's bounds are within the operand.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.slice' op dimension 0 (size 4) cannot be sliced from 2 to 5; need 0 <= start <= limit <= size}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.slice %a, start = [2], limit = [5], strides = [1] : (tensor<4xf32>) -> tensor<3xf32>
  return
}
// -----
// Tests: slice's start does not pass its limit.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.slice' op dimension 0 (size 4) cannot be sliced from 3 to 2; need 0 <= start <= limit <= size}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.slice %a, start = [3], limit = [2], strides = [1] : (tensor<4xf32>) -> tensor<0xf32>
  return
}
// -----
// Tests: slice's strides are at least 1.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.slice' op stride 0 of dimension 0 must be at least 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.slice %a, start = [0], limit = [4], strides = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: slice's result is the sliced type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.slice' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<4}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.slice %a, start = [0], limit = [4], strides = [2] : (tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: concatenate needs an operand.
func.func @f() {
  // expected-error@+2 {{'tessel.concatenate' op needs at least one operand}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = "tessel.concatenate"() {dim = 0 : i64} : () -> tensor<4xf32>
  return
}
// -----
// Tests: concatenate's operands have the same rank.
func.func @f(%a: tensor<4xf32>, %b: tensor<4x1xf32>) {
  // expected-error@+2 {{'tessel.concatenate' op operand #1 has rank 2 but operand #0 has rank 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.concatenate %a, %b dim = 0 : (tensor<4xf32>, tensor<4x1xf32>) -> tensor<8xf32>
  return
}
// -----
// Tests: concatenate's operands have the same element type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+2 {{'tessel.concatenate' op operand #1 has element type 'f16' but operand #0 has 'f32'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.concatenate %a, %b dim = 0 : (tensor<4xf32>, tensor<4xf16>) -> tensor<8xf32>
  return
}
// -----
// Tests: concatenate's dim is a dimension.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.concatenate' op dim 1 is not a dimension of a rank-1 tensor}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.concatenate %a, %a dim = 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return
}
// -----
// Tests: concatenate's operands agree off dim.
func.func @f(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.concatenate' op operand #1 has size 3 in dimension 1 but operand #0 has 2; only dimension 0 may differ}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.concatenate %a, %b dim = 0 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<8x2xf32>
  return
}
// -----
// Tests: concatenate's result is the joined type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.concatenate' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'te}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.concatenate %a, %a dim = 0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<9xf32>
  return
}
// -----
// Tests: pad's low and high have one entry per dimension.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.pad' op low and high need 1 entries each (the operand's rank), got 2 and 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.pad %a, low = [0, 0], high = [1], value = 0.0 : (tensor<4xf32>) -> tensor<5xf32>
  return
}
// -----
// Tests: pad amounts are not negative.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.pad' op padding of dimension 0 is negative (-1 low, 0 high); use tessel.slice to remove elements}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.pad %a, low = [-1], high = [0], value = 0.0 : (tensor<4xf32>) -> tensor<3xf32>
  return
}
// -----
// Tests: pad's result is the padded type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.pad' op inferred type(s) 'tensor<6xf32>' are incompatible with return type(s) of operation 'tensor<5xf}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.pad %a, low = [1], high = [1], value = 0.0 : (tensor<4xf32>) -> tensor<5xf32>
  return
}
// -----
// Contractions ---------------------------------------------------------
// Tests: dot_general's operands have the same element type.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xbf16>) {
  // expected-error@+2 {{'tessel.dot_general' op lhs element type 'f32' differs from rhs element type 'bf16'; insert a tessel.convert}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xbf16>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: dot_general's batching lists have equal length.
func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op batching dimensions [0] x [] differ in length}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [0] x [], contracting = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x4xf32>) -> tensor<2x4x4xf32>
  return
}
// -----
// Tests: dot_general's contracting lists have equal length.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op contracting dimensions [1] x [] differ in length}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8x4xf32>
  return
}
// -----
// Tests: dot_general's dims exist.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op lhs batching + contracting dimensions [2] lists dimension 2, but the operand has rank }}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [2] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: dot_general lists a dim once.
func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op lhs batching + contracting dimensions [1, 1] lists dimension 1 twice}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [1] x [0], contracting = [1] x [1] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return
}
// -----
// Tests: dot_general's batching sizes match.
func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op batching dimension 0 of lhs (size 2) and 0 of rhs (size 3) differ}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [0] x [0], contracting = [2] x [1] : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return
}
// -----
// Tests: dot_general's contracting sizes match.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op contracting dimension 1 of lhs (size 8) and 0 of rhs (size 7) differ}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<7x4xf32>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: dot_general's result is the implied type.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+2 {{'tessel.dot_general' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation '}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return
}
// -----
// Tests: reduce's dims are not empty.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.reduce' op dims must not be empty}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.reduce sum %a, dims = [] : (tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: reduce's dims are strictly increasing.
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+2 {{'tessel.reduce' op dims [1, 0] must be strictly increasing}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.reduce sum %a, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<f32>
  return
}
// -----
// Tests: reduce's dims are within the rank.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+2 {{'tessel.reduce' op dims [1] lists dimension 1, but the operand has rank 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.reduce max %a, dims = [1] : (tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: reduce mean needs floats.
func.func @f(%a: tensor<4xi32>) {
  // expected-error@+2 {{'tessel.reduce' op mean needs a floating-point operand, got 'i32'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.reduce mean %a, dims = [0] : (tensor<4xi32>) -> tensor<i32>
  return
}
// -----
// Tests: reduce's result drops dims.
func.func @f(%a: tensor<4x3xf32>) {
  // expected-error@+2 {{'tessel.reduce' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.reduce sum %a, dims = [0] : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
// -----
// Tests: cumsum's dim is a dimension.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.cumsum' op dim 1 is not a dimension of a rank-1 tensor}}
  %0 = tessel.cumsum %a, dim = 1 : tensor<4xf32>
  return
}
// -----
// NN ops ---------------------------------------------------------------
// Tests: softmax's dim is a dimension.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.softmax' op dim -1 is not a dimension of a rank-1 tensor}}
  %0 = tessel.softmax %a, dim = -1 : tensor<4xf32>
  return
}
// -----
// Tests: layer_norm's operand has rank at least 1.
func.func @f(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error@+1 {{'tessel.layer_norm' op operand must have rank at least 1}}
  %0 = tessel.layer_norm %a, %g, %g, epsilon = 1.0e-05 : tensor<f32>, tensor<1xf32>
  return
}
// -----
// Tests: layer_norm's scale and bias match the last dimension.
func.func @f(%a: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.layer_norm' op scale and bias 'tensor<4xf32>' must be 'tensor<8xf32>' (the operand's last dimension)}}
  %0 = tessel.layer_norm %a, %g, %g, epsilon = 1.0e-05 : tensor<4x8xf32>, tensor<4xf32>
  return
}
// -----
// Tests: layer_norm's epsilon is positive.
func.func @f(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'tessel.layer_norm' op epsilon 0.000000e+00 must be positive}}
  %0 = tessel.layer_norm %a, %g, %g, epsilon = 0.0 : tensor<4x8xf32>, tensor<8xf32>
  return
}
// -----
// Tests: rms_norm's operand has rank at least 1.
func.func @f(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error@+1 {{'tessel.rms_norm' op operand must have rank at least 1}}
  %0 = tessel.rms_norm %a, %g, epsilon = 1.0e-05 : tensor<f32>, tensor<1xf32>
  return
}
// -----
// Tests: rms_norm's scale matches the last dimension and element type.
func.func @f(%a: tensor<4x8xf32>, %g: tensor<8xbf16>) {
  // expected-error@+1 {{'tessel.rms_norm' op scale 'tensor<8xbf16>' must be 'tensor<8xf32>' (the operand's last dimension)}}
  %0 = tessel.rms_norm %a, %g, epsilon = 1.0e-05 : tensor<4x8xf32>, tensor<8xbf16>
  return
}
// -----
// Tests: rms_norm's epsilon is positive.
func.func @f(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'tessel.rms_norm' op epsilon -1.000000e+00 must be positive}}
  %0 = tessel.rms_norm %a, %g, epsilon = -1.0 : tensor<4x8xf32>, tensor<8xf32>
  return
}
// -----
// Tests: gather's axis is a dimension of the table.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xi32>) {
  // expected-error@+2 {{'tessel.gather' op axis 2 is not a dimension of a rank-2 tensor}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.gather %t[%i], axis = 2 : (tensor<16x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return
}
// -----
// Tests: gather's result is the implied type.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xi32>) {
  // expected-error@+2 {{'tessel.gather' op inferred type(s) 'tensor<3x4xf32>' are incompatible with return type(s) of operation 'tenso}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.gather %t[%i], axis = 0 : (tensor<16x4xf32>, tensor<3xi32>) -> tensor<3x16xf32>
  return
}
// -----
// Tests: gather's indices are integers.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xf32>) {
  // expected-error@+1 {{'tessel.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless i}}
  %0 = tessel.gather %t[%i], axis = 0 : (tensor<16x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}
// -----
// Tests: scatter_add's axis is a dimension of the base.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf32>) {
  // expected-error@+1 {{'tessel.scatter_add' op axis 2 is not a dimension of a rank-2 tensor}}
  %0 = tessel.scatter_add %t[%i], %u, axis = 2 : (tensor<16x4xf32>, tensor<3xi32>, tensor<3x4xf32>) -> tensor<16x4xf32>
  return
}
// -----
// Tests: scatter_add's updates have the gathered shape.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xi32>, %u: tensor<3x16xf32>) {
  // expected-error@+1 {{'tessel.scatter_add' op updates 'tensor<3x16xf32>' must be 'tensor<3x4xf32>' (base.shape[:axis] + indices.shap}}
  %0 = tessel.scatter_add %t[%i], %u, axis = 0 : (tensor<16x4xf32>, tensor<3xi32>, tensor<3x16xf32>) -> tensor<16x4xf32>
  return
}
// -----
// Tests: scatter_add's result has the base's type.
func.func @f(%t: tensor<16x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf32>) {
  // expected-error@+2 {{'tessel.scatter_add' op inferred type(s) 'tensor<16x4xf32>' are incompatible with return type(s) of operation }}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.scatter_add %t[%i], %u, axis = 0 : (tensor<16x4xf32>, tensor<3xi32>, tensor<3x4xf32>) -> tensor<16x8xf32>
  return
}
// -----
// Tests: one_hot's result adds one last dimension.
func.func @f(%i: tensor<4xi32>) {
  // expected-error@+1 {{'tessel.one_hot' op result 'tensor<5x10xf32>' must have the indices' shape plus one last dimension (the depth)}}
  %0 = tessel.one_hot %i : (tensor<4xi32>) -> tensor<5x10xf32>
  return
}
// -----
// Tests: top_k's operand has rank at least 1.
func.func @f(%a: tensor<f32>) {
  // expected-error@+2 {{'tessel.top_k' op the operand must have rank at least 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0:2 = tessel.top_k %a, k = 1 : (tensor<f32>) -> (tensor<f32>, tensor<i32>)
  return
}
// -----
// Tests: top_k's k is within the last dimension.
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{'tessel.top_k' op k = 9 must be between 1 and the last dimension (8)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0:2 = tessel.top_k %a, k = 9 : (tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x9xi32>)
  return
}
// -----
// Tests: top_k's results have the implied types.
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{'tessel.top_k' op inferred type(s) 'tensor<4x2xf32>', 'tensor<4x2xi32>' are incompatible with return type(s) o}}
  // expected-error@+1 {{failed to infer returned types}}
  %0:2 = tessel.top_k %a, k = 2 : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  return
}
// -----
// Tests: dropout's rate is in [0, 1).
func.func @f(%s: tensor<i64>) {
  // expected-error@+1 {{'tessel.dropout_mask' op rate 1.000000e+00 must be in [0, 1)}}
  %0 = tessel.dropout_mask %s, rate = 1.0 : (tensor<i64>) -> tensor<4xf32>
  return
}
// -----
// Tests: dropout's seed is a 0-d integer tensor.
func.func @f(%s: tensor<2xi64>) {
  // expected-error@+1 {{'tessel.dropout_mask' op operand #0 must be 0-d tensor of 32/64-bit signless integer, but got 'tensor<2xi64>'}}
  %0 = tessel.dropout_mask %s, rate = 0.5 : (tensor<2xi64>) -> tensor<4xf32>
  return
}
// -----
// Tests: a dropout block has one offset per dimension.
func.func @f(%s: tensor<i64>, %o: tensor<i64>) {
  // expected-error@+1 {{'tessel.dropout_mask' op a block needs one offset and one global size per result dimension (the result has rank 2)}}
  %0 = tessel.dropout_mask %s at [%o] of [8, 8], rate = 0.5 : (tensor<i64>, tensor<i64>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: a dropout block fits in its global shape.
func.func @f(%s: tensor<i64>, %o: tensor<i64>) {
  // expected-error@+1 {{'tessel.dropout_mask' op block dimension 1 (8) is larger than its global size 4}}
  %0 = tessel.dropout_mask %s at [%o, %o] of [8, 4], rate = 0.5 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4x8xf32>
  return
}
// -----
// Tests: cross-entropy's logits have rank at least 1.
func.func @f(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error@+2 {{'tessel.softmax_cross_entropy' op logits must have rank at least 1 (the classes are the last dimension)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.softmax_cross_entropy %l, %t, ignore_index = -100, reduction = mean : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}
// -----
// Tests: cross-entropy's labels drop the class dimension.
func.func @f(%l: tensor<4x10xf32>, %t: tensor<4x10xi32>) {
  // expected-error@+2 {{'tessel.softmax_cross_entropy' op labels 'tensor<4x10xi32>' must have the logits' shape without the class dime}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.softmax_cross_entropy %l, %t, ignore_index = -100, reduction = mean : (tensor<4x10xf32>, tensor<4x10xi32>) -> tensor<f32>
  return
}
// -----
// Tests: cross-entropy's result shape follows the reduction.
func.func @f(%l: tensor<4x10xf32>, %t: tensor<4xi32>) {
  // expected-error@+2 {{'tessel.softmax_cross_entropy' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of ope}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = tessel.softmax_cross_entropy %l, %t, ignore_index = -100, reduction = none : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return
}
// -----
// Collectives ----------------------------------------------------------
// Tests: a collective's mesh exists.
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op refers to mesh @nomesh, which is not defined; declare it with `tessel.mesh @nomesh [...}}
  %0 = tessel.all_reduce sum %a on @nomesh ["x"] : tensor<4xf32>
  return
}
// -----
// Tests: a collective names at least one axis.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op needs at least one mesh axis to communicate over}}
  %0 = tessel.all_reduce sum %a on @mesh [] : tensor<4xf32>
  return
}
// -----
// Tests: a collective names mesh axes.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op mesh @mesh has no axis "ep"}}
  %0 = tessel.all_reduce sum %a on @mesh ["ep"] : tensor<4xf32>
  return
}
// -----
// Tests: a collective names an axis once.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op lists mesh axis "tp" twice}}
  %0 = tessel.all_reduce sum %a on @mesh ["tp", "tp"] : tensor<4xf32>
  return
}
// -----
// Tests: all_reduce keeps the type.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_reduce' op requires the same type for all operands and results}}
  %0 = "tessel.all_reduce"(%a) <{kind = 0 : i32, mesh = @mesh, axes = ["tp"]}> : (tensor<4xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: all_gather's dim is a dimension.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_gather' op dim 1 is not a dimension of a rank-1 tensor}}
  %0 = tessel.all_gather %a on @mesh ["tp"], dim = 1 : (tensor<4xf32>) -> tensor<8xf32>
  return
}
// -----
// Tests: all_gather's result grows dim by the group size.
tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.all_gather' op result type 'tensor<8xf32>' should be 'tensor<16xf32>' for a group of this size}}
  %0 = tessel.all_gather %a on @mesh ["tp"], dim = 0 : (tensor<4xf32>) -> tensor<8xf32>
  return
}
// -----
// Tests: shard_slice's dim is a dimension.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.shard_slice' op dim 1 is not a dimension of a rank-1 tensor}}
  %0 = tessel.shard_slice %a on @mesh ["tp"], dim = 1 : (tensor<4xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: shard_slice's dimension divides by the group size.
tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%a: tensor<6xf32>) {
  // expected-error@+1 {{'tessel.shard_slice' op dimension 0 of the operand (size 6) is not divisible by the group size 4}}
  %0 = tessel.shard_slice %a on @mesh ["tp"], dim = 0 : (tensor<6xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: shard_slice's result is one block.
tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%a: tensor<8x3xf32>) {
  // expected-error@+1 {{'tessel.shard_slice' op result type 'tensor<4x3xf32>' should be 'tensor<1x3xf32>' for a group of this size}}
  %0 = tessel.shard_slice %a on @mesh ["dp", "tp"], dim = 0 : (tensor<8x3xf32>) -> tensor<4x3xf32>
  return
}
// -----
// Tests: reduce_scatter's dim is a dimension.
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.reduce_scatter' op dim 3 is not a dimension of a rank-1 tensor}}
  %0 = tessel.reduce_scatter sum %a on @mesh ["tp"], dim = 3 : (tensor<4xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: reduce_scatter's dim divides by the group size.
tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%a: tensor<6xf32>) {
  // expected-error@+1 {{'tessel.reduce_scatter' op dimension 0 of the operand (size 6) is not divisible by the group size 4}}
  %0 = tessel.reduce_scatter sum %a on @mesh ["tp"], dim = 0 : (tensor<6xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: reduce_scatter's result shrinks dim by the group size.
tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%a: tensor<8xf32>) {
  // expected-error@+1 {{'tessel.reduce_scatter' op result type 'tensor<2xf32>' should be 'tensor<1xf32>' for a group of this size}}
  %0 = tessel.reduce_scatter sum %a on @mesh ["dp", "tp"], dim = 0 : (tensor<8xf32>) -> tensor<2xf32>
  return
}
// -----
// Tests: all_to_all's dims are dimensions.
tessel.mesh @mesh ["tp"=2]
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'tessel.all_to_all' op concat_dim 2 is not a dimension of a rank-2 tensor}}
  %0 = tessel.all_to_all %a on @mesh ["tp"], split_dim = 0, concat_dim = 2 : (tensor<4x4xf32>) -> tensor<2x8xf32>
  return
}
// -----
// Tests: all_to_all's split_dim divides by the group size.
tessel.mesh @mesh ["tp"=4]
func.func @f(%a: tensor<6x4xf32>) {
  // expected-error@+1 {{'tessel.all_to_all' op dimension 0 of the operand (size 6) is not divisible by the group size 4}}
  %0 = tessel.all_to_all %a on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<6x4xf32>) -> tensor<2x16xf32>
  return
}
// -----
// Tests: all_to_all's result moves the factor.
tessel.mesh @mesh ["tp"=2]
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'tessel.all_to_all' op result type 'tensor<4x4xf32>' should be 'tensor<2x8xf32>' for a group of this size}}
  %0 = tessel.all_to_all %a on @mesh ["tp"], split_dim = 0, concat_dim = 1 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
// -----
// Tests: collective_permute's indices are within the group.
tessel.mesh @mesh ["pp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.collective_permute' op pair 0 -> 2 names index 2 outside the group of size 2}}
  %0 = tessel.collective_permute %a on @mesh ["pp"], pairs = [0 -> 2] : tensor<4xf32>
  return
}
// -----
// Tests: collective_permute's sources are distinct.
tessel.mesh @mesh ["pp"=4]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.collective_permute' op index 0 is a source twice}}
  %0 = tessel.collective_permute %a on @mesh ["pp"], pairs = [0 -> 1, 0 -> 2] : tensor<4xf32>
  return
}
// -----
// Tests: collective_permute's targets are distinct.
tessel.mesh @mesh ["pp"=4]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.collective_permute' op index 1 is a target twice}}
  %0 = tessel.collective_permute %a on @mesh ["pp"], pairs = [0 -> 1, 2 -> 1] : tensor<4xf32>
  return
}
// -----
// Tests: send's target is within the group.
tessel.mesh @mesh ["pp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.send' op target 2 is outside the group of size 2}}
  tessel.send %a on @mesh ["pp"], target = 2, channel = 0 : tensor<4xf32>
  return
}
// -----
// Tests: send's channel is not negative.
tessel.mesh @mesh ["pp"=2]
func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'tessel.send' op channel -1 is negative}}
  tessel.send %a on @mesh ["pp"], target = 1, channel = -1 : tensor<4xf32>
  return
}
// -----
// Tests: recv's source is within the group.
tessel.mesh @mesh ["pp"=2]
func.func @f() {
  // expected-error@+1 {{'tessel.recv' op source -1 is outside the group of size 2}}
  %0 = tessel.recv on @mesh ["pp"], source = -1, channel = 0 : tensor<4xf32>
  return
}
// -----
// Tests: recv's channel is not negative.
tessel.mesh @mesh ["pp"=2]
func.func @f() {
  // expected-error@+1 {{'tessel.recv' op channel -3 is negative}}
  %0 = tessel.recv on @mesh ["pp"], source = 0, channel = -3 : tensor<4xf32>
  return
}
// -----
// Tests: axis_index's result is a 0-d integer.
tessel.mesh @mesh ["pp"=2]
func.func @f() {
  // expected-error@+1 {{'tessel.axis_index' op result #0 must be 0-d tensor of 32/64-bit signless integer, but got 'tensor<2xi32>'}}
  %0 = tessel.axis_index on @mesh ["pp"] : tensor<2xi32>
  return
}
// -----
// Tests: axis_index's mesh exists.
func.func @f() {
  // expected-error@+1 {{'tessel.axis_index' op refers to mesh @nomesh, which is not defined; declare it with `tessel.mesh @nomesh [...}}
  %0 = tessel.axis_index on @nomesh ["pp"] : tensor<i32>
  return
}
// -----
// Tests: tessel.role is one of the training-step roles.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.role' must be "forward", "recompute", "backward_input", "backward_weight" or "optimizer", got "backward"}}
  %0 = tessel.neg %x {tessel.role = "backward"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: tessel.stage and tessel.layer are non-negative integers.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.stage' must be a non-negative integer, got -1 : i64}}
  %0 = tessel.neg %x {tessel.stage = -1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: tessel.recompute names a group.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.recompute' must be a non-empty group name, got ""}}
  %0 = tessel.neg %x {tessel.recompute = ""} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: tessel.state_sharding is a sharding that fits its argument.
tessel.mesh @mesh ["dp"=2]
// expected-error@+1 {{'func.func' op 'tessel.state_sharding' on argument #0 must be a #tessel.sharding, got "dp"}}
func.func @f(%w: tensor<4xf32> {tessel.state_sharding = "dp"}) {
  return
}
// -----
// Tests: a tensor's element count must fit in 64 bits (sizes are multiplied
// everywhere; 2^64 elements once wrapped to 0).
// expected-error@+1 {{'func.func' op argument #0 'tensor<4294967296x4294967296xf32>' has more elements or bytes than a 64-bit size can count}}
func.func @f(%a: tensor<4294967296x4294967296xf32> {tessel.name = "a"}) {
  return
}
// -----
// Tests: the same for an op's tensors, and for bytes (2^61 f32 elements are
// 2^63 bytes).
func.func @g(%a: tensor<2305843009213693952xf32>) {
  // expected-error@+1 {{'tessel.neg' op operand #0 'tensor<2305843009213693952xf32>' has more elements or bytes than a 64-bit size can count}}
  %0 = tessel.neg %a : tensor<2305843009213693952xf32>
  return
}
// -----
// Tests: tessel.runtime_role on an argument is an argument role.
// expected-error@+1 {{'func.func' op 'tessel.runtime_role' on argument #0 must be one of "input", "tokens", "labels", "step", "learning_rate", "apply", "grad_scale", "seed", "parameter", "optimizer_state", "accumulator", "state", got "loss"}}
func.func @f(%w: tensor<4xf32> {tessel.runtime_role = "loss"}) {
  return
}
// -----
// Tests: tessel.runtime_role on a result is a result role.
// expected-error@+1 {{'func.func' op 'tessel.runtime_role' on result #0 must be one of "parameter", "optimizer_state", "accumulator", "state", "output", "loss", "grad_norm", "metric", got "step"}}
func.func @f(%w: tensor<4xf32>) -> (tensor<4xf32> {tessel.runtime_role = "step"}) {
  return %w : tensor<4xf32>
}
// -----
// Tests: tessel.runtime_role is a string.
// expected-error@+1 {{'func.func' op 'tessel.runtime_role' on argument #0 must be one of}}
func.func @f(%w: tensor<4xf32> {tessel.runtime_role = 1 : i64}) {
  return
}
// -----
// Tests: tessel.runtime_role belongs on function boundaries.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.runtime_role' belongs on function arguments and results, not on operations}}
  %0 = tessel.neg %x {tessel.runtime_role = "parameter"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// Tests: tessel.full_precision is a unit attribute.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tessel.neg' op 'tessel.full_precision' is a unit attribute, got 1 : i64}}
  %0 = tessel.neg %x {tessel.full_precision = 1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'tessel.model_flops' is a module's model FLOPs per step: a finite float, not negative}}
module attributes {tessel.model_flops = -1.0 : f64} {
}
