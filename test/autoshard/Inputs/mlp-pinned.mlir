// A 2-layer MLP with two user annotations for --tessel-auto-shard to keep:
// the batch split over "dp" (open: the planner may add axes) and fc1's
// weight pinned column-parallel over "tp" (closed).
module {
  tessel.mesh @mesh ["dp"=2, "tp"=2]
  func.func @forward(
      %w1: tensor<256x1024xf32> {tessel.name = "fc1.weight",
                                 tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
      %w2: tensor<1024x256xf32> {tessel.name = "fc2.weight"},
      %x: tensor<64x256xf32> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"],
                              tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>},
      %y: tensor<64x256xf32> {tessel.name = "y", tessel.logical_axes = ["batch", "embed"]})
      -> tensor<f32> {
    %0 = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0]
        : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
    %1 = tessel.gelu %0 approximation = tanh : tensor<64x1024xf32>
    %2 = tessel.dot_general %1, %w2, batching = [] x [], contracting = [1] x [0]
        : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
    %3 = tessel.sub %2, %y : tensor<64x256xf32>
    %4 = tessel.mul %3, %3 : tensor<64x256xf32>
    %5 = tessel.reduce sum %4, dims = [0, 1] : (tensor<64x256xf32>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}
