tessel.mesh @mesh ["x"=3, "y"=2]
func.func @f(%a3: tensor<1x8x12xf32> {tessel.name = "in3", tessel.init = "normal:1", tessel.sharding = #tessel.sharding<@mesh, [{?}, {"y"}, {?}p0]>})
    -> (tensor<12x12xf32> {tessel.name = "r2", tessel.sharding = #tessel.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %v10 = tessel.dot_general %a3, %a3, batching = [] x [], contracting = [0, 1] x [0, 1] : (tensor<1x8x12xf32>, tensor<1x8x12xf32>) -> tensor<12x12xf32>
  return %v10 : tensor<12x12xf32>
}
