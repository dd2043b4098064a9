tessel.mesh @m ["x"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessel.exp %a {tessel.sharding = [1, 2]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
