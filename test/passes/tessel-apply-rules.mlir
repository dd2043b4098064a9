// RUN: tessel-opt %s --split-input-file --tessel-apply-rules="rules=%S/Inputs/megatron-rules.json" | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-apply-rules="strategy=dp" | FileCheck %s --check-prefix=DP
// RUN: tessel-opt %s --split-input-file --tessel-apply-rules="strategy=dp" --tessel-apply-rules="strategy=dp" | FileCheck %s --check-prefix=TWICE
// RUN: not tessel-opt %s --split-input-file --tessel-apply-rules="rules=%S/Inputs/bad-rules.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not tessel-opt %s --split-input-file --tessel-apply-rules="rules=%S/Inputs/unused-typo-rules.json" 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: not tessel-opt %s --split-input-file --tessel-apply-rules 2>&1 | FileCheck %s --check-prefix=NONE

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that tagged arguments get closed shardings, an axis is used once per
// tensor, existing shardings are kept, and a tagged op gets a constraint whose
// unmapped dimensions are open and mapped ones propagate at p1.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>
// CHECK-SAME: tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>
// CHECK: %[[H:.*]] = tessel.dot_general
// CHECK-NEXT: %[[C:.*]] = tessel.sharding_constraint %[[H]] <@mesh, [{"dp"}p1, {"tp"}p1]>
// CHECK-NEXT: tessel.gelu %[[C]]
// DP-LABEL: func.func @mlp
// DP-SAME: [{"dp"}, {}]
// DP-SAME: [{}, {}]
// DP: tessel.sharding_constraint %{{.*}} <@mesh, [{"dp"}p1, {?}]>
func.func @mlp(%x: tensor<8x4xf32> {tessel.logical_axes = ["batch", "embed"]},
               %w1: tensor<4x16xf32> {tessel.logical_axes = ["embed", "mlp"]},
               %w2: tensor<16x4xf32> {tessel.logical_axes = ["mlp", "embed"]},
               %kept: tensor<16x4xf32> {tessel.logical_axes = ["mlp", "embed"], tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> tensor<8x4xf32> {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] {tessel.logical_axes = ["batch", "mlp"]} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<8x16xf32>
  %y = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// Tests that applying the rules twice adds nothing the second time.
// TWICE-LABEL: func.func @mlp
// TWICE-COUNT-1: tessel.sharding_constraint
// TWICE-NOT: tessel.sharding_constraint

// BAD: bad-rules.json: rule 'batch' must map to a mesh axis, a list of mesh axes, or null
// Tests that every rule is checked against the mesh, also rules the model
// does not use ("kv_heads" here): a typo never passes silently.
// UNUSED: error: logical axis rule 'kv_heads' maps to mesh axis 'mp', which mesh @mesh does not have

// NONE: tessel-apply-rules needs exactly one of rules=FILE and strategy=NAME
