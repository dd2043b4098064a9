tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = tessel.slice %x, start = [0, 2], limit = [8, 14], strides = [1, 1] : (tensor<8x16xf32>) -> tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}
