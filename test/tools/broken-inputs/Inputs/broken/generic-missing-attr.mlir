func.func @f(%a: tensor<4x4xf32>) {
  %0 = "tessel.transpose"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
