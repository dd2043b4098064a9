// examples/mlp.mlir plus @init, which computes fc1's initial weight and
// bias from a seed tensor (test/runtime/init.test): twice the seed, and the
// seed's column maxima, laid out as the step's parameters.
module {
  tessel.mesh @mesh ["dp"=2, "tp"=2]

  func.func @forward(
      // Layer 1 is column-parallel: its output features are split over "tp".
      %w1: tensor<16x32xf32> {tessel.name = "fc1.weight",
                              tessel.logical_axes = ["embed", "mlp"],
                              tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
      %b1: tensor<32xf32> {tessel.name = "fc1.bias",
                           tessel.logical_axes = ["mlp"],
                           tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>},
      // Layer 2 is row-parallel: its input features are split over "tp".
      %w2: tensor<32x10xf32> {tessel.name = "fc2.weight",
                              tessel.logical_axes = ["mlp", "classes"],
                              tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>},
      %b2: tensor<10xf32> {tessel.name = "fc2.bias",
                           tessel.logical_axes = ["classes"],
                           tessel.sharding = #tessel.sharding<@mesh, [{}]>},
      // The batch is split over "dp".
      %x: tensor<8x16xf32> {tessel.logical_axes = ["batch", "embed"],
                            tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
      %labels: tensor<8xi32> {tessel.logical_axes = ["batch"],
                              tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>})
      -> (tensor<f32> {tessel.sharding = #tessel.sharding<@mesh, []>}) {
    // h = gelu(x @ w1 + b1): [8, 16] x [16, 32] -> [8, 32]
    %0 = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0]
        : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = tessel.broadcast_in_dim %b1, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
    %2 = tessel.add %0, %1 : tensor<8x32xf32>
    %3 = tessel.gelu %2 approximation = tanh : tensor<8x32xf32>
    // Pin the hidden activation: rows on "dp", hidden units on "tp".
    %h = tessel.sharding_constraint %3 <@mesh, [{"dp"}, {"tp"}]> : tensor<8x32xf32>
    // logits = h @ w2 + b2: [8, 32] x [32, 10] -> [8, 10]
    %4 = tessel.dot_general %h, %w2, batching = [] x [], contracting = [1] x [0]
        : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
    %5 = tessel.broadcast_in_dim %b2, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %logits = tessel.add %4, %5 : tensor<8x10xf32>
    // Mean cross-entropy over the batch; label -100 would be ignored.
    %loss = tessel.softmax_cross_entropy %logits, %labels, ignore_index = -100,
        reduction = mean : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }

  func.func @init(%s: tensor<16x32xf32> {tessel.name = "seed", tessel.init = "uniform:-1:1",
                                         tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
      -> (tensor<16x32xf32> {tessel.name = "fc1.weight",
                             tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
          tensor<32xf32> {tessel.name = "fc1.bias",
                          tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) {
    %w = tessel.add %s, %s : tensor<16x32xf32>
    %b = tessel.reduce max %s, dims = [0] : (tensor<16x32xf32>) -> tensor<32xf32>
    return %w, %b : tensor<16x32xf32>, tensor<32xf32>
  }
}
