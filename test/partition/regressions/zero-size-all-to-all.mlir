tessel.mesh @mesh ["y"=2, "x"=2]
func.func @f(%c1: tensor<f32> {tessel.name = "cut1", tessel.init = "int:-3:4"},
             %c2: tensor<4x0x12xf32> {tessel.name = "cut2", tessel.init = "int:-3:4"})
    -> (tensor<f32> {tessel.name = "loss"}, tensor<4x0x12xf32> {tessel.name = "r2", tessel.sharding = #tessel.sharding<@mesh, [{}, {?}p1, {?}]>}, tensor<4x0x12xf32> {tessel.name = "r3", tessel.sharding = #tessel.sharding<@mesh, [{"x", ?}, {?}, {"y", ?}]>}) {
  %v7 = tessel.min %c2, %c2 : tensor<4x0x12xf32>
  return %c1, %v7, %c2 : tensor<f32>, tensor<4x0x12xf32>, tensor<4x0x12xf32>
}
