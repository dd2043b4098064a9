tessel.mesh @mesh ["y"=4, "z"=2]
func.func @f(%a0: tensor<4x1x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {"z", "y"}, {}]>}, %a1: tensor<3x6x16xf32>, %a2: tensor<12xf32>, %a3: tensor<12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}]>}) -> (tensor<4x1x12xf32>) {
  %v1 = tessel.rms_norm %a0, %a2, epsilon = 1.0e-05 : tensor<4x1x12xf32>, tensor<12xf32>
  %v2 = tessel.softmax %a2, dim = 0 : tensor<12xf32>
  %v3 = tessel.rms_norm %v1, %a3, epsilon = 1.0e-05 : tensor<4x1x12xf32>, tensor<12xf32>
  %v4 = tessel.mul %a1, %a1 : tensor<3x6x16xf32>
  %v5 = tessel.softmax %a1, dim = 0 : tensor<3x6x16xf32>
  return %v1 : tensor<4x1x12xf32>
}
