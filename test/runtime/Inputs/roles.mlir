// A two-layer classifier whose parameters are named `step` and `loss`, the
// names of the step counter and of the loss: roles, not names, tell the
// runtime which is which (tessel.runtime_role, set by the train step).
tessel.mesh @mesh ["dp"=2, "tp"=2]
func.func @forward(
    %w1: tensor<8x16xf32> {tessel.name = "step", tessel.init = "uniform:-0.5:0.5",
                           tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
    %w2: tensor<16x4xf32> {tessel.name = "loss", tessel.init = "uniform:-0.5:0.5",
                           tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>},
    %x: tensor<4x8xf32> {tessel.name = "x", tessel.init = "normal:1.0",
                         tessel.logical_axes = ["batch", "embed"],
                         tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
    %labels: tensor<4xi32> {tessel.name = "labels", tessel.init = "int:0:4",
                            tessel.logical_axes = ["batch"],
                            tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>})
    -> tensor<f32> {
  %h = tessel.dot_general %x, %w1, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = tessel.tanh %h : tensor<4x16xf32>
  %o = tessel.dot_general %a, %w2, batching = [] x [], contracting = [1] x [0] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %l = tessel.softmax_cross_entropy %o, %labels, ignore_index = -100, reduction = sum : (tensor<4x4xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
