tessel.mesh @mesh ["x"=4]
func.func @f(%a0: tensor<6x16xf32>, %a1: tensor<4x8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"x"}, {?}]>}, %a2: tensor<16x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {}]>}, %a3: tensor<4x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {?}]>}) -> (tensor<3x8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", ?}, {?}, {?}]>}, tensor<4x8x4xf32>) {
  %v1 = tessel.softmax %a1, dim = 0 : tensor<4x8x16xf32>
  %v2 = tessel.transpose %v1, permutation = [0, 2, 1] : (tensor<4x8x16xf32>) -> tensor<4x16x8xf32>
  %v3 = tessel.sharding_constraint %a1 <@mesh, [{?}, {"x"}, {}]> : tensor<4x8x16xf32>
  %v4 = tessel.slice %v3, start = [0, 0, 0], limit = [4, 8, 5], strides = [1, 1, 1] : (tensor<4x8x16xf32>) -> tensor<4x8x5xf32>
  %v5 = tessel.reduce max %v1, dims = [1, 2] : (tensor<4x8x16xf32>) -> tensor<4xf32>
  %v6 = tessel.softmax %a1, dim = 1 : tensor<4x8x16xf32>
  %v7 = tessel.dot_general %v6, %a2, batching = [] x [], contracting = [2] x [0] : (tensor<4x8x16xf32>, tensor<16x4xf32>) -> tensor<4x8x4xf32>
  %v8 = tessel.slice %v1, start = [0, 0, 0], limit = [3, 8, 16], strides = [1, 1, 1] : (tensor<4x8x16xf32>) -> tensor<3x8x16xf32>
  %v9 = tessel.slice %v1, start = [0, 0, 0], limit = [4, 8, 7], strides = [1, 1, 1] : (tensor<4x8x16xf32>) -> tensor<4x8x7xf32>
  %v10 = tessel.dot_general %v7, %a3, batching = [] x [], contracting = [2] x [0] : (tensor<4x8x4xf32>, tensor<4x16xf32>) -> tensor<4x8x16xf32>
  %v11 = tessel.cumsum %a2, dim = 0 : tensor<16x4xf32>
  %v12 = tessel.concatenate %v1, %v1 dim = 2 : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x32xf32>
  %v13 = tessel.add %v6, %v10 : tensor<4x8x16xf32>
  return %v8, %v7 : tensor<3x8x16xf32>, tensor<4x8x4xf32>
}
