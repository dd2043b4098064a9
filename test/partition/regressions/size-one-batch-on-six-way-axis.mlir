tessel.mesh @mesh ["x"=6]
func.func @f(%a1: tensor<1x1x5xf32> {tessel.name = "in1", tessel.init = "uniform:0.5:2", tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {?}, {?}p0]>},
             %a2: tensor<1x5x6x8x1xf32> {tessel.name = "in2", tessel.init = "uniform:0.5:2"}) -> (tensor<1xf32> {tessel.name = "r0"}) {
  %v3 = tessel.dot_general %a1, %a2, batching = [0] x [4], contracting = [2, 1] x [1, 0] : (tensor<1x1x5xf32>, tensor<1x5x6x8x1xf32>) -> tensor<1x6x8xf32>
  %v7 = tessel.reduce min %v3, dims = [1, 2] : (tensor<1x6x8xf32>) -> tensor<1xf32>
  return %v7 : tensor<1xf32>
}
