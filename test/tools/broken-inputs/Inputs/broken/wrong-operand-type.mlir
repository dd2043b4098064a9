func.func @f(%a: tensor<4xi32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessel.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
