// The result's annotation asks for a split that the layout best for the
// value's other users does not give (found by check_partition.py --random
// --auto-shard): auto-shard reshards the returned value to it.
tessel.mesh @mesh ["x"=6]
func.func @f(%a0: tensor<16xf32>, %a1: tensor<6x4x4xf32>, %a2: tensor<16x12xf32>, %a3: tensor<16xi32>) -> (tensor<12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", ?}]>}) {
  %v1 = tessel.dot_general %a0, %a2, batching = [] x [], contracting = [0] x [0] : (tensor<16xf32>, tensor<16x12xf32>) -> tensor<12xf32>
  %v2 = tessel.slice %a0, start = [2], limit = [16], strides = [1] : (tensor<16xf32>) -> tensor<14xf32>
  %v3 = tessel.concatenate %v1, %v1 dim = 0 : (tensor<12xf32>, tensor<12xf32>) -> tensor<24xf32>
  %v4 = tessel.sub %v3, %v3 : tensor<24xf32>
  %v5 = tessel.softmax_cross_entropy %a2, %a3, ignore_index = -100, reduction = mean : (tensor<16x12xf32>, tensor<16xi32>) -> tensor<f32>
  %v6 = tessel.concatenate %v1, %v1 dim = 0 : (tensor<12xf32>, tensor<12xf32>) -> tensor<24xf32>
  %v7 = tessel.transpose %a2, permutation = [0, 1] : (tensor<16x12xf32>) -> tensor<16x12xf32>
  %v8 = tessel.reshape %v3 : (tensor<24xf32>) -> tensor<2x12xf32>
  %v9 = tessel.reduce mean %v2, dims = [0] : (tensor<14xf32>) -> tensor<f32>
  %v10 = tessel.broadcast_in_dim %v7, dims = [1, 2] : (tensor<16x12xf32>) -> tensor<2x16x12xf32>
  return %v1 : tensor<12xf32>
}
