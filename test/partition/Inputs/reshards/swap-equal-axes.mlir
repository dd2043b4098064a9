tessel.mesh @mesh ["x"=2, "y"=2]
func.func @f(%x: tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"y"}, {"x"}]>}) {
  return %x : tensor<8x8xf32>
}
