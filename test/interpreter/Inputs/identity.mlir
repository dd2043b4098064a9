func.func @f(%loss: tensor<f32> {tessel.name = "loss"}) -> (tensor<f32> {tessel.name = "loss"}) {
  return %loss : tensor<f32>
}
