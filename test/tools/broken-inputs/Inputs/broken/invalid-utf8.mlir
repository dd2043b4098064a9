func.func @f() {
  // Ã( invalid utf8
  %0 = tessel.exp Ã( : tensor<4xf32>
}
