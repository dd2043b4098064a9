tessel.mesh @mesh ["x"=3]
func.func @f(%a0: tensor<12x16x2xf32>, %a1: tensor<8x2xf32>, %a2: tensor<2x6xf32>) -> (tensor<4x2x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}, {?}]>}, tensor<8x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {?}]>}) {
  %v1 = tessel.softmax %a0, dim = 1 : tensor<12x16x2xf32>
  %v2 = tessel.neg %a1 : tensor<8x2xf32>
  %v3 = tessel.dot_general %v1, %a2, batching = [] x [], contracting = [2] x [0] : (tensor<12x16x2xf32>, tensor<2x6xf32>) -> tensor<12x16x6xf32>
  %v4 = tessel.max %v2, %v2 : tensor<8x2xf32>
  %v5 = tessel.reshape %a1 : (tensor<8x2xf32>) -> tensor<4x2x2xf32>
  return %v5, %v2 : tensor<4x2x2xf32>, tensor<8x2xf32>
}
