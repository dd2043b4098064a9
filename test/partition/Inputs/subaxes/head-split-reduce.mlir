tessel.mesh @mesh ["tp"=8]
func.func @f(%x: tensor<4x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<4x2xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"tp":(1)2}]>}) {
  %0 = tessel.reshape %x : (tensor<4x16xf32>) -> tensor<4x2x8xf32>
  %1 = tessel.reduce sum %0, dims = [2] : (tensor<4x2x8xf32>) -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}
