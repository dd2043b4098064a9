tessel.mesh @mesh ["dp"=2, "tp"=3]
func.func @f(%a1: tensor<2x5x4xf32> {tessel.name = "in1", tessel.init = "uniform:0.5:2", tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {?}, {?}]>},
             %a3: tensor<2x4x5x3x3xf32> {tessel.name = "in3"}, %a5: tensor<4x3xi32> {tessel.name = "in5", tessel.init = "int:0:3"}) -> (tensor<4x3xf32> {tessel.name = "r2"}) {
  %v4 = tessel.dot_general %a1, %a3, batching = [2] x [1], contracting = [1, 0] x [2, 0] : (tensor<2x5x4xf32>, tensor<2x4x5x3x3xf32>) -> tensor<4x3x3xf32>
  %v6 = tessel.softmax_cross_entropy %v4, %a5, ignore_index = -100, reduction = none : (tensor<4x3x3xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
  return %v6 : tensor<4x3xf32>
}
