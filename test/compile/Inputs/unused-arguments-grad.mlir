// Two unused arguments: their gradients are the same zero tensor, which the
// gradient function returns twice.
func.func @f(%x: tensor<4xf32> {tessel.name = "x", tessel.init = "normal:1"}, %u: tensor<4xf32> {tessel.name = "u"}, %v: tensor<4xf32> {tessel.name = "v"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %s = tessel.mul %x, %x : tensor<4xf32>
  %l = tessel.reduce sum %s, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
