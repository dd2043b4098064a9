// A zero-size parameter sharded over dp, in the dimension of size 0 and
// in the other (issue 13 item 4: it once compiled into a program its own
// runtime refused). test/runtime/zero-size-parameter.test.
tessel.mesh @mesh ["dp"=2]
func.func @forward(%w: tensor<8x4xf32> {tessel.name = "w", tessel.init = "normal:0.1", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>},
                   %e: tensor<0x4xf32> {tessel.name = "empty", tessel.init = "normal:0.1", tessel.sharding = #tessel.sharding<@mesh, [{}, {"dp"}]>},
                   %x: tensor<6x8xf32> {tessel.name = "x"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %y = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %c = tessel.concatenate %y, %e dim = 0 : (tensor<6x4xf32>, tensor<0x4xf32>) -> tensor<6x4xf32>
  %s = tessel.reduce sum %c, dims = [0, 1] : (tensor<6x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
