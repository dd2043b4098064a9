tessel.mesh @mesh ["tp"=8]
func.func @f(%x: tensor<4x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<4x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = tessel.reshape %x : (tensor<4x16xf32>) -> tensor<4x2x8xf32>
  %1 = tessel.exp %0 : tensor<4x2x8xf32>
  %2 = tessel.reshape %1 : (tensor<4x2x8xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
