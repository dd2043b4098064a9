// Tests that an SPMD program's inputs are sliced by their shardings and its
// outputs reassembled: a hand-partitioned Megatron MLP on dp=2 x tp=2 (and
// an uneven one, hidden 9 padded to 2 x 5) equals the global program.
// RUN: tessel-interp %s --func forward --seed 5 --save %t.ref
// RUN: tessel-interp %s --func forward_spmd --seed 5 --expect %t.ref | FileCheck %s
// RUN: tessel-interp %s --func uneven --seed 6 --save %t.uneven
// RUN: tessel-interp %s --func uneven_spmd --seed 6 --expect %t.uneven | FileCheck %s
// Tests that a wrong partitioning is caught: without the all-reduce the
// partial sums differ across the tp replicas of the result.
// RUN: not tessel-interp %s --func missing_all_reduce --seed 5 2>&1 | FileCheck %s --check-prefix=PARTIAL
// CHECK: match y: max abs err {{.*}}

// PARTIAL: devices 0 and 1 hold different values

tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x6xf32> {tessel.name = "x"},
                   %w1: tensor<6x10xf32> {tessel.name = "w1"},
                   %w2: tensor<10x6xf32> {tessel.name = "w2"})
    -> (tensor<8x6xf32> {tessel.name = "y"}) {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<8x6xf32>, tensor<6x10xf32>) -> tensor<8x10xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<8x10xf32>
  %y = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<8x10xf32>, tensor<10x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

func.func @forward_spmd(
    %x: tensor<4x6xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
    %w1: tensor<6x5xf32> {tessel.name = "w1", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
    %w2: tensor<5x6xf32> {tessel.name = "w2", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<4x6xf32> {tessel.name = "y", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>})
    attributes {tessel.spmd = @mesh} {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<4x5xf32>
  %p = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  %y = tessel.all_reduce sum %p on @mesh ["tp"] : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @uneven(%x: tensor<8x6xf32> {tessel.name = "x"},
                  %w1: tensor<6x9xf32> {tessel.name = "w1"},
                  %w2: tensor<9x6xf32> {tessel.name = "w2"})
    -> (tensor<8x6xf32> {tessel.name = "y"}) {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<8x6xf32>, tensor<6x9xf32>) -> tensor<8x9xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<8x9xf32>
  %y = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<8x9xf32>, tensor<9x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// Hidden 9 over tp=2: blocks of 5, the last one padded with a zero column of
// w1 and a zero row of w2 (gelu(0) = 0, so the padding adds nothing).
func.func @uneven_spmd(
    %x: tensor<4x6xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
    %w1: tensor<6x5xf32> {tessel.name = "w1", tessel.global_type = tensor<6x9xf32>, tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
    %w2: tensor<5x6xf32> {tessel.name = "w2", tessel.global_type = tensor<9x6xf32>, tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<4x6xf32> {tessel.name = "y", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>})
    attributes {tessel.spmd = @mesh} {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<4x5xf32>
  %p = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  %y = tessel.all_reduce sum %p on @mesh ["tp"] : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @missing_all_reduce(
    %x: tensor<4x6xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
    %w1: tensor<6x5xf32> {tessel.name = "w1", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
    %w2: tensor<5x6xf32> {tessel.name = "w2", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<4x6xf32> {tessel.name = "y", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>})
    attributes {tessel.spmd = @mesh} {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %p = tessel.dot_general %h, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  return %p : tensor<4x6xf32>
}
