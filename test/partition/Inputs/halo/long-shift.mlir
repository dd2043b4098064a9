tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>}) {
  %0 = tessel.slice %x, start = [3, 0], limit = [8, 4], strides = [1, 1] : (tensor<8x4xf32>) -> tensor<5x4xf32>
  %1 = tessel.pad %0, low = [3, 0], high = [0, 0], value = 1.5 : (tensor<5x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
