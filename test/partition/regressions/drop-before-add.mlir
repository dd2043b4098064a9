tessel.mesh @mesh ["z"=4]
func.func @f(%a0: tensor<12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}]>}, %a1: tensor<3x3xf32>, %a2: tensor<3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"z", ?}p2]>}) -> (tensor<3x3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"z", ?}p0, {}]>}, tensor<3x6xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {"z"}]>}) {
  %v1 = tessel.exp %a0 : tensor<12xf32>
  %v2 = tessel.softmax %a0, dim = 0 : tensor<12xf32>
  %v3 = tessel.slice %v2, start = [0], limit = [3], strides = [1] : (tensor<12xf32>) -> tensor<3xf32>
  %v4 = tessel.sharding_constraint %a1 <@mesh, [{}, {"z", ?}]> : tensor<3x3xf32>
  %v5 = tessel.rms_norm %v4, %a2, epsilon = 1.0e-05 : tensor<3x3xf32>, tensor<3xf32>
  %v6 = tessel.concatenate %a1, %a1 dim = 1 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x6xf32>
  %v7 = tessel.concatenate %v6, %v6 dim = 0 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<6x6xf32>
  %v8 = tessel.mul %v5, %a1 : tensor<3x3xf32>
  %v9 = tessel.slice %v6, start = [0, 0], limit = [1, 6], strides = [1, 1] : (tensor<3x6xf32>) -> tensor<1x6xf32>
  return %v8, %v6 : tensor<3x3xf32>, tensor<3x6xf32>
}
