// A learnable scalar (a temperature) beside a matrix: the global gradient
// norm must count it (its square, no reduce).
func.func @forward(%w: tensor<4x4xf32> {tessel.name = "w", tessel.init = "normal:0.1"}, %t: tensor<f32> {tessel.name = "temperature", tessel.init = "constant:1"}, %x: tensor<2x4xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]}) -> (tensor<f32> {tessel.name = "loss"}) {
  %y = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %tb = tessel.broadcast_in_dim %t, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
  %z = tessel.mul %y, %tb : tensor<2x4xf32>
  %s = tessel.mul %z, %z : tensor<2x4xf32>
  %l = tessel.reduce mean %s, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
