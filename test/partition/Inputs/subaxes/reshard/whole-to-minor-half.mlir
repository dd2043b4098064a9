tessel.mesh @mesh ["tp"=4]
func.func @f(%x: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(2)2}, {"tp":(1)2}]>}) {
  return %x : tensor<8x8xf32>
}
