tessel.mesh @mesh ["sp"=4]
func.func @f(%x: tensor<16x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"sp"}, {}]>})
    -> (tensor<16x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"sp"}, {}]>}) {
  %0 = tessel.slice %x, start = [3, 0], limit = [16, 8], strides = [1, 1] : (tensor<16x8xf32>) -> tensor<13x8xf32>
  %1 = tessel.slice %x, start = [0, 0], limit = [3, 8], strides = [1, 1] : (tensor<16x8xf32>) -> tensor<3x8xf32>
  %2 = tessel.concatenate %0, %1 dim = 0 : (tensor<13x8xf32>, tensor<3x8xf32>) -> tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
