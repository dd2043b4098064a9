func.func @f() {
  %0 = tessel.constant dense<[1.0, 2.0, 3.0]> : tensor<4xf32>
  return
}
