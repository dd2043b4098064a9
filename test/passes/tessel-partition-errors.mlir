// RUN: tessel-opt %s --split-input-file --tessel-partition -verify-diagnostics

tessel.mesh @a ["x"=2]
tessel.mesh @b ["x"=4]

// Tests that a function using two meshes is an error at the second one, not
// a silently wrong program.
func.func @mixed(%x: tensor<8xf32> {tessel.sharding = #tessel.sharding<@a, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{uses mesh @b where @mixed already uses @a; partition one mesh per function}}
  %0 = tessel.neg %x {tessel.sharding = #tessel.sharding<@b, [{"x"}]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

tessel.mesh @m ["x"=2]

// Tests that a call left in a global program is reported (inline first).
func.func private @g(tensor<8xf32>) -> tensor<8xf32>
func.func @calls(%x: tensor<8xf32> {tessel.sharding = #tessel.sharding<@m, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{'func.call' cannot appear in a global program being partitioned (inline calls first)}}
  %0 = func.call @g(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

tessel.mesh @m ["x"=2]

// Tests that a collective in a program being partitioned is reported.
func.func @has_collective(%x: tensor<8xf32> {tessel.sharding = #tessel.sharding<@m, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{'tessel.all_reduce' cannot appear in a global program being partitioned}}
  %0 = tessel.all_reduce sum %x on @m ["x"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}
