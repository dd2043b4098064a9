tessel.mesh @mesh ["x"=2]
func.func @f(%a1: tensor<2x1xf32> {tessel.name = "in1", tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<1x2xf32> {tessel.name = "r0", tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {?}]>}) {
  %v12 = tessel.transpose %a1, permutation = [1, 0] : (tensor<2x1xf32>) -> tensor<1x2xf32>
  %v13 = tessel.sharding_constraint %v12 <@mesh, [{?}, {"x"}]> : tensor<1x2xf32>
  return %v13 : tensor<1x2xf32>
}
