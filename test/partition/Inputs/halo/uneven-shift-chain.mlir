tessel.mesh @mesh ["dp"=2, "tp"=3]
func.func @f(%x: tensor<10x6xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>})
    -> tensor<10x6xf32> {
  %0 = tessel.slice %x, start = [1, 0], limit = [10, 6], strides = [1, 1] : (tensor<10x6xf32>) -> tensor<9x6xf32>
  %1 = tessel.pad %0, low = [0, 0], high = [1, 0], value = 0.0 : (tensor<9x6xf32>) -> tensor<10x6xf32>
  %2 = tessel.sub %x, %1 : tensor<10x6xf32>
  %3 = tessel.pad %2, low = [1, 0], high = [0, 0], value = 1.0 : (tensor<10x6xf32>) -> tensor<11x6xf32>
  %4 = tessel.slice %3, start = [0, 0], limit = [10, 6], strides = [1, 1] : (tensor<11x6xf32>) -> tensor<10x6xf32>
  %5 = tessel.mul %4, %x : tensor<10x6xf32>
  return %5 : tensor<10x6xf32>
}
