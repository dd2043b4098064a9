tessel.mesh @mesh ["z"=4, "x"=2]
func.func @f(%a0: tensor<4xf32>, %a1: tensor<8x12xf32>, %a2: tensor<12x2x3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {?}, {"x"}]>}, %a3: tensor<3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}]>}, %a4: tensor<2x16xf32>) -> (tensor<12x2x3x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {"x", ?}, {"z", ?}, {?}]>}, tensor<12x2x3xf32>) {
  %v1 = tessel.rms_norm %a2, %a3, epsilon = 1.0e-05 : tensor<12x2x3xf32>, tensor<3xf32>
  %v2 = tessel.transpose %a2, permutation = [0, 2, 1] : (tensor<12x2x3xf32>) -> tensor<12x3x2xf32>
  %v3 = tessel.dot_general %v2, %a4, batching = [] x [], contracting = [2] x [0] : (tensor<12x3x2xf32>, tensor<2x16xf32>) -> tensor<12x3x16xf32>
  %v4 = tessel.softmax %v3, dim = 0 : tensor<12x3x16xf32>
  %v5 = tessel.relu %a4 : tensor<2x16xf32>
  %v6 = tessel.broadcast_in_dim %v1, dims = [0, 1, 2] : (tensor<12x2x3xf32>) -> tensor<12x2x3x4xf32>
  return %v6, %v1 : tensor<12x2x3x4xf32>, tensor<12x2x3xf32>
}
