tessel.mesh @mesh ["x"=4]
func.func @f(%x: tensor<10x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"x"}]>})
    -> (tensor<10x8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>}) {
  return %x : tensor<10x8xf32>
}
