tessel.mesh @mesh ["z"=2]
func.func @f(%a0: tensor<16xf32>, %a1: tensor<12x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"z"}, {}]>}, %a2: tensor<16x1xf32> {tessel.sharding = #tessel.sharding<@mesh, [{}, {"z", ?}]>}) -> (tensor<1xf32>, tensor<1xf32>) {
  %v1 = tessel.sharding_constraint %a1 <@mesh, [{"z"}, {?}]> : tensor<12x4xf32>
  %v2 = tessel.dot_general %a0, %a2, batching = [] x [], contracting = [0] x [0] : (tensor<16xf32>, tensor<16x1xf32>) -> tensor<1xf32>
  %v3 = tessel.tanh %v2 : tensor<1xf32>
  return %v3, %v2 : tensor<1xf32>, tensor<1xf32>
}
