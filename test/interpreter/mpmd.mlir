// Tests SPMD functions run together, each on the ranks of its own mesh (the
// stages of a pipeline): stage 0 (ranks 0, 1) computes the first layer of
// its half of the batch and sends the activations over the "pp" axis of a
// mesh spanning both stages; stage 1 (ranks 2, 3) receives them, computes
// the second layer, and all-reduces the loss over its own "dp" axis. The
// result equals the one-device @reference.
// RUN: tessel-interp %s --func reference --seed 3 --save %t.ref
// RUN: tessel-interp %s --func first,second --seed 3 --expect %t.ref | FileCheck %s
// CHECK: match y: max abs err
// CHECK: match loss: max abs err
// Ranks must run exactly one function, and only SPMD functions run together.
// RUN: not tessel-interp %s --func first,everyone 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: rank 0 runs both @first and @everyone: give their meshes disjoint device lists
// RUN: not tessel-interp %s --func first 2>&1 | FileCheck %s --check-prefix=ALONE
// ALONE: tessel-interp: a message sent on channel 0 by rank 0 to rank 2 was never received (1 left): does rank 2 run the matching tessel.recv?
// RUN: not tessel-interp %s --func reference,second 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: @reference is not a tessel.spmd function

tessel.mesh @world ["pp"=2, "dp"=2]
tessel.mesh @stage0 ["dp"=2] devices = [0, 1]
tessel.mesh @stage1 ["dp"=2] devices = [2, 3]

func.func @reference(%x: tensor<4x8xf32> {tessel.name = "x", tessel.init = "normal:1"},
                     %w0: tensor<8x16xf32> {tessel.name = "w0", tessel.init = "normal:0.5"},
                     %w1: tensor<16x4xf32> {tessel.name = "w1", tessel.init = "normal:0.5"})
    -> (tensor<4x4xf32> {tessel.name = "y"}, tensor<f32> {tessel.name = "loss"}) {
  %h = tessel.dot_general %x, %w0, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = tessel.relu %h : tensor<4x16xf32>
  %y = tessel.dot_general %a, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %sq = tessel.mul %y, %y : tensor<4x4xf32>
  %loss = tessel.reduce sum %sq, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<f32>
  return %y, %loss : tensor<4x4xf32>, tensor<f32>
}

func.func @first(%x: tensor<2x8xf32> {tessel.name = "x", tessel.init = "normal:1", tessel.sharding = #tessel.sharding<@stage0, [{"dp"}, {}]>},
                 %w0: tensor<8x16xf32> {tessel.name = "w0", tessel.init = "normal:0.5"})
    attributes {tessel.spmd = @stage0} {
  %h = tessel.dot_general %x, %w0, batching = [] x [], contracting = [1] x [0] : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %a = tessel.relu %h : tensor<2x16xf32>
  tessel.send %a on @world ["pp"], target = 1, channel = 0 : tensor<2x16xf32>
  return
}

func.func @second(%w1: tensor<16x4xf32> {tessel.name = "w1", tessel.init = "normal:0.5"})
    -> (tensor<2x4xf32> {tessel.name = "y", tessel.sharding = #tessel.sharding<@stage1, [{"dp"}, {}]>}, tensor<f32> {tessel.name = "loss"})
    attributes {tessel.spmd = @stage1} {
  %a = tessel.recv on @world ["pp"], source = 0, channel = 0 : tensor<2x16xf32>
  %y = tessel.dot_general %a, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  %sq = tessel.mul %y, %y : tensor<2x4xf32>
  %part = tessel.reduce sum %sq, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
  %loss = tessel.all_reduce sum %part on @stage1 ["dp"] : tensor<f32>
  return %y, %loss : tensor<2x4xf32>, tensor<f32>
}

func.func @everyone(%x: tensor<1xf32> {tessel.name = "z"}) -> (tensor<1xf32> {tessel.name = "z2"})
    attributes {tessel.spmd = @world} {
  return %x : tensor<1xf32>
}
