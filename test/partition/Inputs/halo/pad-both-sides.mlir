tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<8x14xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = tessel.pad %x, low = [0, 1], high = [0, 1], value = -2.5 : (tensor<8x14xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
