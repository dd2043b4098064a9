// Inputs/custom.mlir with built-in ops.
tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x16xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w: tensor<16x32xf32> {tessel.name = "w", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w2: tensor<32x4xf32> {tessel.name = "w2", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) -> (tensor<f32> {tessel.name = "loss"}) {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = tessel.gelu %h approximation = tanh : tensor<8x32xf32>
  %o = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = tessel.mul %o, %o : tensor<8x4xf32>
  %l = tessel.reduce sum %s, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
