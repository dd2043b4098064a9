tessel.mesh @mesh ["x"=2, "y"=3]
func.func @f(%a: tensor<5x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", "y"}, {}]>},
             %b: tensor<7x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", "y"}, {}]>},
             %c: tensor<6x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", "y"}, {}]>})
    -> (tensor<18x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", "y"}, {}]>}) {
  %0 = tessel.concatenate %a, %b, %c dim = 0 : (tensor<5x4xf32>, tensor<7x4xf32>, tensor<6x4xf32>) -> tensor<18x4xf32>
  return %0 : tensor<18x4xf32>
}
