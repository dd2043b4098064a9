// The model of Inputs/builtin.mlir with its matmuls and GELU as custom
// calls: the rules --tessel-print-rules prints for dot_general and gelu.
// The matmuls' VJP is a tessel function, GELU's another custom call.
tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @forward(%x: tensor<8x16xf32> {tessel.name = "x", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %w: tensor<16x32xf32> {tessel.name = "w", tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
                   %w2: tensor<32x4xf32> {tessel.name = "w2", tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) -> (tensor<f32> {tessel.name = "loss"}) {
  %h = tessel.custom_call @my_matmul(%x, %w) {rule = #tessel.rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=32, k=16} reduction={k}>, vjp = @matmul_vjp_16x32} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = tessel.custom_call @ext_gelu(%h) {rule = #tessel.rule<([i, j]) -> ([i, j]) {i=8, j=32}>, vjp = @gelu_vjp} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = tessel.custom_call @my_matmul(%g, %w2) {rule = #tessel.rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=4, k=32} reduction={k}>, vjp = @matmul_vjp_32x4} : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = tessel.mul %o, %o : tensor<8x4xf32>
  %l = tessel.reduce sum %s, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func private @gelu_vjp(%h: tensor<8x32xf32>, %dy: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %dx = tessel.custom_call @ext_gelu_grad(%h, %dy) {rule = #tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=8, j=32}>} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %dx : tensor<8x32xf32>
}

func.func private @matmul_vjp_16x32(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %dc: tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<16x32xf32>) {
  %da = tessel.dot_general %dc, %b, batching = [] x [], contracting = [1] x [1] : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %db = tessel.dot_general %a, %dc, batching = [] x [], contracting = [0] x [0] : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return %da, %db : tensor<8x16xf32>, tensor<16x32xf32>
}

func.func private @matmul_vjp_32x4(%a: tensor<8x32xf32>, %b: tensor<32x4xf32>, %dc: tensor<8x4xf32>) -> (tensor<8x32xf32>, tensor<32x4xf32>) {
  %da = tessel.dot_general %dc, %b, batching = [] x [], contracting = [1] x [1] : (tensor<8x4xf32>, tensor<32x4xf32>) -> tensor<8x32xf32>
  %db = tessel.dot_general %a, %dc, batching = [] x [], contracting = [0] x [0] : (tensor<8x32xf32>, tensor<8x4xf32>) -> tensor<32x4xf32>
  return %da, %db : tensor<8x32xf32>, tensor<32x4xf32>
}
