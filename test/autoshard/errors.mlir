// RUN: tessel-opt %s --split-input-file --tessel-auto-shard="mesh=dp:2,tp:2 memory=1MiB" -verify-diagnostics

// Tests that a memory limit no choice meets is an error naming the limit:
// the 4 MiB weight with its gradient and AdamW's two moments needs at least
// 4 MiB per device on 4 devices.
// expected-error@+1 {{auto-shard: no choice meets the memory limit (1.00 MiB per device); hint: raise memory= or use a mesh of more devices}}
func.func @forward(%w: tensor<1024x1024xf32>, %x: tensor<8x1024xf32> {tessel.logical_axes = ["batch", "embed"]}) -> tensor<8x1024xf32> {
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<8x1024xf32>, tensor<1024x1024xf32>) -> tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// -----

// Tests that a call (no sharding rule) is an error on the op with a hint.
func.func private @g(tensor<8xf32>) -> tensor<8xf32>
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'func.call' has no sharding rule, so auto-shard cannot place it; hint: inline calls (--inline)}}
  %0 = func.call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that the module's @mesh must be the one asked for.
// expected-error@+1 {{the module's @mesh differs from mesh=dp:2,tp:2; hint: leave mesh= out to plan on it}}
tessel.mesh @mesh ["dp"=4]
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}

// -----

// Tests that an annotation no strategy can meet is an error naming the
// value: a dimension of 3 cannot be split over "tp"=2 without padding, and
// auto-shard only splits evenly.
tessel.mesh @mesh ["dp"=2, "tp"=2]
// expected-error@+1 {{no strategy of a gives it the annotated sharding #tessel.sharding<@mesh, [{"tp"}]>}}
func.func @forward(%a: tensor<3xf32> {tessel.name = "a", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) -> tensor<3xf32> {
  %0 = tessel.neg %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a missing function is named with the option that picks one.
// expected-error@+1 {{auto-shard: no function @forward with a body; hint: func=NAME}}
module {
  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

// -----

// Tests that an annotation naming another mesh is refused.
tessel.mesh @mesh ["dp"=2, "tp"=2]
tessel.mesh @other ["y"=2]
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{the annotation names mesh @other, but auto-shard plans on @mesh}}
  %0 = tessel.sharding_constraint %a <@other, [{"y"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
