tessel.mesh @m ["x"=2]
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tessel.all_reduce sum %a on @m ["x"] : tensor<2xf32>
  return %0 : tensor<2xf32>
}
