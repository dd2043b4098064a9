// A tied autoencoder: y = tanh(x W) W^T, loss = mean((y - x)^2). The
// backward reads W (for the input gradient of the second use), so ZeRO-3
// gathers W again in the backward: the ZeRO paper's setting.
tessel.mesh @mesh ["dp"=4]
func.func @forward(%w: tensor<64x128xf32> {tessel.name = "w", tessel.logical_axes = ["embed", "mlp"], tessel.init = "normal:0.1"},
                   %x: tensor<16x64xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %a = tessel.tanh %h : tensor<16x128xf32>
  %y = tessel.dot_general %a, %w, batching = [] x [], contracting = [1] x [1]
      : (tensor<16x128xf32>, tensor<64x128xf32>) -> tensor<16x64xf32>
  %d = tessel.sub %y, %x : tensor<16x64xf32>
  %sq = tessel.mul %d, %d : tensor<16x64xf32>
  %l = tessel.reduce mean %sq, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
