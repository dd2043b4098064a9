// RUN: tessel-opt %tessel_src/examples/mlp.mlir | tessel-opt | FileCheck %s
// RUN: tessel-opt --tessel-strip-shardings %tessel_src/examples/mlp.mlir | FileCheck %s --check-prefix=STRIP

// Tests the complete example of docs/writing-a-model.md (examples/mlp.mlir):
// it must verify, print, and parse again; stripping its shardings must leave
// the single-device program.

// CHECK: tessel.mesh @mesh ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: tensor<16x32xf32> {tessel.logical_axes = ["embed", "mlp"], tessel.name = "fc1.weight", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: tensor<32xf32> {tessel.logical_axes = ["mlp"], tessel.name = "fc1.bias", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}
// CHECK-SAME: tensor<32x10xf32> {tessel.logical_axes = ["mlp", "classes"], tessel.name = "fc2.weight", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}
// CHECK-SAME: tensor<10xf32> {tessel.logical_axes = ["classes"], tessel.name = "fc2.bias", tessel.sharding = #tessel.sharding<@mesh, [{}]>}
// CHECK-SAME: tensor<8x16xf32> {tessel.logical_axes = ["batch", "embed"], tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: tensor<8xi32> {tessel.logical_axes = ["batch"], tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>}
// CHECK-SAME: -> (tensor<f32> {tessel.sharding = #tessel.sharding<@mesh, []>})
// CHECK: tessel.dot_general %{{.*}}, %{{.*}}, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK: tessel.gelu %{{.*}} approximation = tanh : tensor<8x32xf32>
// CHECK: tessel.sharding_constraint %{{.*}} <@mesh, [{"dp"}, {"tp"}]> : tensor<8x32xf32>
// CHECK: tessel.dot_general %{{.*}}, %{{.*}}, batching = [] x [], contracting = [1] x [0] : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
// CHECK: %[[LOSS:.*]] = tessel.softmax_cross_entropy %{{.*}}, %{{.*}}, ignore_index = -100, reduction = mean : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
// CHECK: return %[[LOSS]] : tensor<f32>

// STRIP: tessel.mesh @mesh ["dp"=2, "tp"=2]
// STRIP-NOT: tessel.sharding
// STRIP: tessel.softmax_cross_entropy
// STRIP-SAME: -> tensor<f32>

