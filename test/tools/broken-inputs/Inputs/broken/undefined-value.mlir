func.func @f() -> tensor<4xf32> {
  %0 = tessel.exp %nope : tensor<4xf32>
  return %0 : tensor<4xf32>
}
