// A two-layer MLP whose activation is the custom call @ext_gelu
// (FusedGelu.c), sharded Megatron-style on dp=2 x tp=2: its rule is
// element-wise, so it runs on each device's [batch/dp, hidden/tp] block;
// its VJP is another custom call.
tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x16xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w1: tensor<16x32xf32> {tessel.name = "w1", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w2: tensor<32x4xf32> {tessel.name = "w2", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) -> (tensor<f32> {tessel.name = "loss"}) {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = tessel.custom_call @ext_gelu(%h) {rule = #tessel.rule<([i, j]) -> ([i, j]) {i=8, j=32}>, vjp = @ext_gelu_vjp} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = tessel.dot_general %g, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = tessel.mul %o, %o : tensor<8x4xf32>
  %l = tessel.reduce sum %s, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func private @ext_gelu_vjp(%h: tensor<8x32xf32>, %dy: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %dx = tessel.custom_call @ext_gelu_grad(%h, %dy) {rule = #tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=8, j=32}>} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %dx : tensor<8x32xf32>
}
