func.func @g(%a: tensor<4xf32> {tessel.name = "a"}) -> (tensor<4xf32> {tessel.name = "r0"}, tensor<4xf32> {tessel.name = "r1"}) {
  %v = tessel.neg %a : tensor<4xf32>
  return %v, %v : tensor<4xf32>, tensor<4xf32>
}
