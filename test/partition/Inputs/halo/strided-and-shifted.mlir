tessel.mesh @mesh ["x"=2, "y"=2]
func.func @f(%x: tensor<8x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<7x5xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = tessel.slice %x, start = [1, 2], limit = [8, 12], strides = [1, 2] : (tensor<8x12xf32>) -> tensor<7x5xf32>
  return %0 : tensor<7x5xf32>
}
