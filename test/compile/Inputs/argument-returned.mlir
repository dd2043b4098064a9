func.func @g(%a: tensor<4xf32> {tessel.name = "a"}, %b: tensor<4xf32> {tessel.name = "b"}) -> (tensor<4xf32> {tessel.name = "r0"}, tensor<4xf32> {tessel.name = "r1"}, tensor<4xf32> {tessel.name = "r2"}) {
  return %a, %a, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
