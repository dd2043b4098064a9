tessel.mesh @mesh ["x"=2, "y"=2]
func.func @f(%x: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<7x7xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = tessel.slice %x, start = [1, 1], limit = [8, 8], strides = [1, 1] : (tensor<8x8xf32>) -> tensor<7x7xf32>
  return %0 : tensor<7x7xf32>
}
