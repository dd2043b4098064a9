// RUN: tessel-opt %s --split-input-file --tessel-auto-shard -verify-diagnostics

// Tests that an annotation of a sub-axis is refused: auto-shard places whole
// axes (mesh= left out: the module's mesh is used).
tessel.mesh @mesh ["tp"=4]
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{auto-shard takes annotations of whole mesh axes, not 'tp:(1)2'}}
  %0 = tessel.sharding_constraint %a <@mesh, [{"tp":(1)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that without mesh= the module must have exactly one mesh.
// expected-error@+1 {{auto-shard needs mesh=AXIS:SIZE,... (the module has 2 meshes)}}
module {
  tessel.mesh @a ["x"=2]
  tessel.mesh @b ["y"=2]
  func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

