tessel.mesh @mesh ["a"=6]
func.func @f(%x: tensor<12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"a":(1)2}]>})
    -> (tensor<12xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"a":(1)3}]>}) {
  return %x : tensor<12xf32>
}
