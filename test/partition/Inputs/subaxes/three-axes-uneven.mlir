tessel.mesh @mesh ["x"=2, "y"=4, "z"=2]
func.func @f(%a: tensor<5x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y", "z"}]>})
    -> (tensor<5x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y":(1)2}]>}) {
  %0 = tessel.reshape %a : (tensor<5x16xf32>) -> tensor<5x2x8xf32>
  %1 = tessel.exp %0 : tensor<5x2x8xf32>
  %2 = tessel.reduce sum %1, dims = [2] : (tensor<5x2x8xf32>) -> tensor<5x2xf32>
  return %2 : tensor<5x2xf32>
}
