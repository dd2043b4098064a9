tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<8x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = tessel.pad %x, low = [0, 2], high = [0, 2], value = 7.0 : (tensor<8x12xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
