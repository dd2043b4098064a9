tessel.mesh @mesh ["z"=2, "y"=3, "x"=3]
func.func @f(%a0: tensor<1x16x12xf32>) -> (tensor<1x16x12xf32>, tensor<1x16x12xf32>) {
  %v1 = tessel.reduce max %a0, dims = [0, 1, 2] : (tensor<1x16x12xf32>) -> tensor<f32>
  %v2 = tessel.cumsum %a0, dim = 1 : tensor<1x16x12xf32>
  %v3 = tessel.sharding_constraint %a0 <@mesh, [{}, {?}, {?}]> : tensor<1x16x12xf32>
  %v4 = tessel.broadcast_in_dim %v2, dims = [0, 1, 2] : (tensor<1x16x12xf32>) -> tensor<1x16x12x3xf32>
  %v5 = tessel.concatenate %v4, %v4 dim = 1 : (tensor<1x16x12x3xf32>, tensor<1x16x12x3xf32>) -> tensor<1x32x12x3xf32>
  %v6 = tessel.max %v3, %v3 : tensor<1x16x12xf32>
  %v7 = tessel.reduce max %a0, dims = [0, 1, 2] : (tensor<1x16x12xf32>) -> tensor<f32>
  %v8 = tessel.sharding_constraint %v5 <@mesh, [{}, {"z", ?}, {"x", "y", ?}, {}]> : tensor<1x32x12x3xf32>
  return %v2, %v6 : tensor<1x16x12xf32>, tensor<1x16x12xf32>
}
