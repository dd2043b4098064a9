func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {
  %0 = tessel.all_gather %a on @m ["x"], dim = 0 : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
