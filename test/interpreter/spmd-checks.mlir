// Tests checks of SPMD execution: max/min all-reduces propagate NaN whichever
// device holds it, and local types must be the blocks their global types and
// shardings imply.
// RUN: tessel-interp %s --func nan_on_device_1 --print | FileCheck %s --check-prefix=NAN
// RUN: not tessel-interp %s --func wrong_block 2>&1 | FileCheck %s --check-prefix=BLOCK

tessel.mesh @mesh ["x"=2]

// Device 0 holds [0, 1], device 1 holds [NaN, 3]: the max is [NaN, 3].
// NAN: result0: f32[2] = [nan, 3]
func.func @nan_on_device_1() -> (tensor<2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}]>})
    attributes {tessel.spmd = @mesh} {
  %i = tessel.axis_index on @mesh ["x"] : tensor<i32>
  %f = tessel.convert %i : (tensor<i32>) -> tensor<f32>
  %b = tessel.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %k = tessel.iota dim = 0 : tensor<2xf32>
  %two = tessel.constant dense<2.0> : tensor<2xf32>
  %v = tessel.add %k, %two : tensor<2xf32>
  %zero = tessel.constant dense<0.0> : tensor<2xf32>
  %nanmask = tessel.compare gt, %b, %zero : tensor<2xf32>
  %inf = tessel.constant dense<[0x7FC00000, 3.0]> : tensor<2xf32>
  %x = tessel.select %nanmask, %inf, %k : tensor<2xi1>, tensor<2xf32>
  %r = tessel.all_reduce max %x on @mesh ["x"] : tensor<2xf32>
  return %r : tensor<2xf32>
}

// A global size of 9 over 2 devices needs local blocks of 5, not 3.
// BLOCK: argument #0: dimension 0 has local size 3, but a global size of 9 over 2 devices needs blocks of 5
func.func @wrong_block(%a: tensor<3xf32> {tessel.global_type = tensor<9xf32>, tessel.sharding = #tessel.sharding<@mesh, [{"x"}]>})
    -> (tensor<3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}]>})
    attributes {tessel.spmd = @mesh} {
  return %a : tensor<3xf32>
}
