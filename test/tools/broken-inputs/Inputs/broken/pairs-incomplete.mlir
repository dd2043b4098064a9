tessel.mesh @m ["x"=2]
func.func @f(%a: tensor<4xf32>) {
  %0 = tessel.collective_permute %a on @m ["x"], pairs = [0 -> ] : tensor<4xf32>
  return
}
