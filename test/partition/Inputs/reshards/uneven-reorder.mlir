tessel.mesh @mesh ["dp"=2, "tp"=3]
func.func @f(%x: tensor<10x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp", "tp"}, {}]>})
    -> (tensor<10x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp", "dp"}, {}]>}) {
  return %x : tensor<10x2xf32>
}
