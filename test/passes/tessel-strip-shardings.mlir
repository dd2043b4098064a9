// RUN: tessel-opt %s --tessel-strip-shardings | FileCheck %s
// RUN: tessel-opt %s --tessel-strip-shardings=remove-meshes | FileCheck %s --check-prefix=NOMESH

// CHECK: tessel.mesh @mesh
// NOMESH-NOT: tessel.mesh
tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that argument, result and op shardings and sharding constraints are
// removed while names and logical axes stay.
// CHECK-LABEL: func.func @annotated
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<4x4xf32> {tessel.name = "w"}) -> tensor<8x4xf32> {
// CHECK-NEXT: %[[Y:.*]] = tessel.dot_general %[[X]], %[[W]]
// CHECK-NOT: tessel.sharding
// CHECK-NEXT: return %[[Y]]
// NOMESH-LABEL: func.func @annotated
// NOMESH-NOT: tessel.sharding
func.func @annotated(
    %x: tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
    %w: tensor<4x4xf32> {tessel.name = "w", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp"}]>}) {
  %0 = tessel.sharding_constraint %x <@mesh, [{"dp"}, {?}]> : tensor<8x4xf32>
  %1 = tessel.dot_general %0, %w, batching = [] x [], contracting = [1] x [0]
      {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"tp"}]>}
      : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// Tests that a mesh still referred to by a collective is kept.
// NOMESH: tessel.mesh @used
tessel.mesh @used ["x"=2]
func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessel.all_reduce sum %x on @used ["x"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
