tessel.mesh @m ["x"=2]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessel.all_reduce sum %a on @m::@x ["x"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
