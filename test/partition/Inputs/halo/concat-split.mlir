tessel.mesh @mesh ["tp"=4]
func.func @f(%a: tensor<8x6xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>},
             %b: tensor<8x10xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = tessel.concatenate %a, %b dim = 1 : (tensor<8x6xf32>, tensor<8x10xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
