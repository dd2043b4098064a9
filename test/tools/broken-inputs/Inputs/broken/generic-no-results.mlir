func.func @f(%a: tensor<4x8xf32>) {
  "tessel.top_k"(%a) <{k = 2 : i64}> : (tensor<4x8xf32>) -> ()
  return
}
