tessel.mesh @mesh ["a"=2, "b"=2, "c"=4, "d"=2]
func.func @f(%x: tensor<8x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"c":(2)2, "a"}, {"b", "c":(1)2}]>})
    -> (tensor<8x12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"c"}, {"b", "d"}]>}) {
  return %x : tensor<8x12xf32>
}
