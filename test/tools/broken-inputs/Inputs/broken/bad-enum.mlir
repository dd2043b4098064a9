func.func @f(%a: tensor<4xf32>) {
  %0 = tessel.reduce avg %a, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return
}
