tessel.mesh @mesh ["x"=2, "y"=2, "z"=2]
func.func @f(%a: tensor<16xf32> {tessel.name = "a", tessel.sharding = #tessel.sharding<@mesh, [{"x", "y", "z"}]>}) -> (tensor<f32> {tessel.name = "loss"}) {
  %v = tessel.reduce sum %a, dims = [0] : (tensor<16xf32>) -> tensor<f32>
  return %v : tensor<f32>
}
