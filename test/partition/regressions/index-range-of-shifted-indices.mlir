tessel.mesh @mesh ["z"=3]
func.func @f(%a0: tensor<6x1xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"z", ?}, {}]>}, %a1: tensor<6x4x3xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"z", ?}, {?}, {?}]>}, %a2: tensor<2xf32>, %a3: tensor<16xi32>, %a4: tensor<1xf32>) -> (tensor<16x1xf32> {tessel.sharding = #tessel.sharding<@mesh, [{?}, {?}]>}, tensor<6x1xf32>) {
  %v1 = tessel.sharding_constraint %a2 <@mesh, [{}]> : tensor<2xf32>
  %v2 = tessel.gather %a0[%a3], axis = 0 : (tensor<6x1xf32>, tensor<16xi32>) -> tensor<16x1xf32>
  %v3 = tessel.rms_norm %a0, %a4, epsilon = 1.0e-05 : tensor<6x1xf32>, tensor<1xf32>
  return %v2, %v3 : tensor<16x1xf32>, tensor<6x1xf32>
}
