tessel.mesh @mesh ["x"=4]
func.func @f(%a0: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", ?}]>}, %a1: tensor<3xi32>, %a2: tensor<4x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", ?}, {}]>}) -> (tensor<2x4xf32>) {
  %v1 = tessel.reshape %a0 : (tensor<8xf32>) -> tensor<2x4xf32>
  %v2 = tessel.relu %a0 : tensor<8xf32>
  %v3 = tessel.mul %v1, %v1 : tensor<2x4xf32>
  %v4 = tessel.mul %v1, %v1 : tensor<2x4xf32>
  %v5 = tessel.gather %v1[%a1], axis = 0 : (tensor<2x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  %v6 = tessel.broadcast_in_dim %v4, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x4xf32>
  %v7 = tessel.slice %v1, start = [0, 0], limit = [2, 4], strides = [1, 1] : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %v8 = tessel.reshape %v3 : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
  %v9 = tessel.dot_general %v5, %a2, batching = [] x [], contracting = [1] x [0] : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  return %v7 : tensor<2x4xf32>
}
