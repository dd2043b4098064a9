tessel.mesh @mesh ["dp"=2, "tp"=4]
func.func @f(%x: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp":(1)2}, {"dp"}]>})
    -> (tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}, {"dp"}]>}) {
  return %x : tensor<8x8xf32>
}
