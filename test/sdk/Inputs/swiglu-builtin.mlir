// examples/extending/swiglu.mlir with ext.swiglu written out in built-in
// ops: silu(x . w_gate) * (x . w_up). Its gradients check the op's VJP.
tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x16xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w_gate: tensor<16x32xf32> {tessel.name = "w_gate", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w_up: tensor<16x32xf32> {tessel.name = "w_up"},
                   %w_down: tensor<32x4xf32> {tessel.name = "w_down"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %a = tessel.dot_general %x, %w_gate, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %b = tessel.dot_general %x, %w_up, batching = [] x [], contracting = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %s = tessel.silu %a : tensor<8x32xf32>
  %h = tessel.mul %s, %b : tensor<8x32xf32>
  %o = tessel.dot_general %h, %w_down, batching = [] x [], contracting = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %q = tessel.mul %o, %o : tensor<8x4xf32>
  %l = tessel.reduce sum %q, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
