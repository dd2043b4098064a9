tessel.mesh @mesh ["x"=2, "y"=2, "z"=2]
func.func @f(%a1: tensor<12x2xf32> {tessel.name = "in1", tessel.init = "uniform:0.5:2"}) -> (tensor<2x2xf32> {tessel.name = "r2"}) {
  %v4 = tessel.dot_general %a1, %a1, batching = [] x [], contracting = [0] x [0] : (tensor<12x2xf32>, tensor<12x2xf32>) -> tensor<2x2xf32>
  %v5 = tessel.sharding_constraint %v4 <@mesh, [{"z", ?}, {"y", ?}]> : tensor<2x2xf32>
  return %v5 : tensor<2x2xf32>
}
