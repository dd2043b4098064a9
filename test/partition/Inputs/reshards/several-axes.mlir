tessel.mesh @mesh ["x"=2, "y"=4]
func.func @f(%x: tensor<16x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x", "y"}, {}]>})
    -> (tensor<16x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"x", "y"}]>}) {
  return %x : tensor<16x16xf32>
}
