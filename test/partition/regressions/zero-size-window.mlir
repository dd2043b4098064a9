// Windows of size zero along a split dimension: a concatenate with an empty
// operand and a slice to no rows (the halo exchange once built a
// concatenate of no pieces; found by fuzz.test, seed 1, program 23).
tessel.mesh @mesh ["x"=2]
func.func @f(%a: tensor<6x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>},
             %e: tensor<0x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<6x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>},
        tensor<0x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>}) {
  %c = tessel.concatenate %e, %a dim = 0 : (tensor<0x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = tessel.slice %a, start = [2, 0], limit = [2, 4], strides = [1, 1] : (tensor<6x4xf32>) -> tensor<0x4xf32>
  return %c, %s : tensor<6x4xf32>, tensor<0x4xf32>
}
