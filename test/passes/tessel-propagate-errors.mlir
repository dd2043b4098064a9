// RUN: tessel-opt %s --split-input-file --tessel-propagate -verify-diagnostics

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that two closed annotations of one value that cannot both hold are
// an error naming both places: the argument says dp, the result tp.
// expected-error@+1 {{result #0 of @f shards dimension 0 of %arg0 as {"tp"} (closed), but argument #0 of @f}}
func.func @f(%a: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>})
    -> (tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) {
  return %a : tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2, "tp"=4]

// Tests that one value returned twice with different closed shardings is an
// error too.
// expected-error@+1 {{result #1 of @g shards dimension 0 of %0 as {} (closed), but result #0 of @g}}
func.func @g(%a: tensor<8xf32>) -> (tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>},
                                    tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}]>}) {
  %0 = tessel.neg %a : tensor<8xf32>
  return %0, %0 : tensor<8xf32>, tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2]

// Tests that a function call is reported, not silently skipped.
func.func private @callee(tensor<8xf32>) -> tensor<8xf32>
func.func @caller(%a: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{tessel-propagate does not cross function calls; inline them first (--inline)}}
  %0 = func.call @callee(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2]

// Tests that a collective (a per-device op) in a global program is reported.
func.func @per_device(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'tessel.all_reduce' is a per-device collective; propagation runs on global programs, before partitioning}}
  %0 = tessel.all_reduce sum %a on @mesh ["dp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

tessel.mesh @mesh ["dp"=2]

// Tests that an op with no sharding rule is an error naming the op, never a
// silent replication.
func.func @no_rule(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'arith.addf' has no sharding rule, so its results cannot be sharded}}
  %0 = arith.addf %a, %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
