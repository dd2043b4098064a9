// A Llama-style MLP whose gate and up projections are one ext.swiglu
// (ExtDialect.cpp), on dp=2 x tp=2. Only the input and w_gate are
// annotated: the op's sharding rule carries tp from w_gate's columns to
// w_up and to the activation, and w_down's rows follow; the
// down-projection ends in one all-reduce over tp.
tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x16xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w_gate: tensor<16x32xf32> {tessel.name = "w_gate", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w_up: tensor<16x32xf32> {tessel.name = "w_up"},
                   %w_down: tensor<32x4xf32> {tessel.name = "w_down"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %h = ext.swiglu %x, %w_gate, %w_up : (tensor<8x16xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %o = tessel.dot_general %h, %w_down, batching = [] x [], contracting = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = tessel.mul %o, %o : tensor<8x4xf32>
  %l = tessel.reduce sum %s, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
