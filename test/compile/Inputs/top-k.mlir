func.func @forward(%x: tensor<4x8xf32> {tessel.name = "x"}) -> tensor<f32> {
  %v, %i = tessel.top_k %x, k = 2 : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %s = tessel.reduce sum %v, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
