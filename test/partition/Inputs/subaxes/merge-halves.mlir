tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<2x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)2}, {"tp":(2)2}]>})
    -> (tensor<32xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) {
  %0 = tessel.reshape %x : (tensor<2x16xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
