tessel.mesh @mesh ["x"=2, "y"=3]
func.func @main(%a: tensor<6x5xf32> {tessel.name = "a", tessel.init = "normal:1", tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {?}]>},
                %b: tensor<5x4xf32> {tessel.name = "b", tessel.init = "uniform:-1:1", tessel.sharding = #tessel.sharding<@mesh, [{"y", ?}, {}]>},
                %ids: tensor<3xi32> {tessel.name = "ids"}) -> (tensor<6x4xf32> {tessel.name = "o0"}, tensor<3x4xf32> {tessel.name = "o1"}) {
  %0 = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %1 = tessel.sharding_constraint %0 <@mesh, [{"y"}, {"x"}]> : tensor<6x4xf32>
  %2 = tessel.softmax %1, dim = 1 : tensor<6x4xf32>
  %3 = tessel.gather %b[%ids], axis = 0 : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %2, %3 : tensor<6x4xf32>, tensor<3x4xf32>
}
