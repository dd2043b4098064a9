// A chain of element-wise ops with a broadcast bias: one fused kernel.
func.func @chain(%x: tensor<64x32xf32> {tessel.name = "x"}, %b: tensor<32xf32> {tessel.name = "b"}) -> (tensor<64x32xf32> {tessel.name = "y"}) {
  %bb = tessel.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %0 = tessel.add %x, %bb : tensor<64x32xf32>
  %1 = tessel.tanh %0 : tensor<64x32xf32>
  %2 = tessel.mul %1, %x : tensor<64x32xf32>
  %3 = tessel.exp %2 : tensor<64x32xf32>
  %4 = tessel.sub %3, %bb : tensor<64x32xf32>
  return %4 : tensor<64x32xf32>
}

// The same chain twice in a row.
func.func @twice(%x: tensor<64x32xf32> {tessel.name = "x"}, %b: tensor<32xf32> {tessel.name = "b"}, %c: tensor<32xf32> {tessel.name = "c"}) -> (tensor<64x32xf32> {tessel.name = "y"}, tensor<64x32xf32> {tessel.name = "z"}) {
  %bb = tessel.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %0 = tessel.add %x, %bb : tensor<64x32xf32>
  %1 = tessel.tanh %0 : tensor<64x32xf32>
  %2 = tessel.mul %1, %x : tensor<64x32xf32>
  %3 = tessel.exp %2 : tensor<64x32xf32>
  %4 = tessel.sub %3, %bb : tensor<64x32xf32>
  %cc = tessel.broadcast_in_dim %c, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %5 = tessel.add %x, %cc : tensor<64x32xf32>
  %6 = tessel.tanh %5 : tensor<64x32xf32>
  %7 = tessel.mul %6, %x : tensor<64x32xf32>
  %8 = tessel.exp %7 : tensor<64x32xf32>
  %9 = tessel.sub %8, %cc : tensor<64x32xf32>
  return %4, %9 : tensor<64x32xf32>, tensor<64x32xf32>
}
