// A forward whose second layer is tagged with an earlier stage than the
// first: stages must follow the data.
tessel.mesh @mesh ["pp"=2]
func.func @forward(%x: tensor<4x8xf32> {tessel.name = "x"},
                   %w0: tensor<8x8xf32> {tessel.name = "w0"},
                   %w1: tensor<8x8xf32> {tessel.name = "w1"}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w0, batching = [] x [], contracting = [1] x [0] {tessel.stage = 1 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = tessel.dot_general %h, %w1, batching = [] x [], contracting = [1] x [0] {tessel.stage = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = tessel.reduce sum %y, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
