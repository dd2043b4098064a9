tessel.mesh @mesh ["dp"=2, "tp"=1, "pp"=3]
func.func @f(%a2: tensor<4xf32> {tessel.name = "in2", tessel.sharding = #tessel.sharding<@mesh, [{"tp", "dp", "pp"}]>}) -> (tensor<f32> {tessel.name = "r1"}) {
  %v3 = tessel.reduce mean %a2, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %v3 : tensor<f32>
}
