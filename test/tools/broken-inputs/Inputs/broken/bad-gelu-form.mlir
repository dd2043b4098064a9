func.func @f(%a: tensor<4xf32>) {
  %0 = tessel.gelu %a approximation = sigmoid : tensor<4xf32>
  return
}
