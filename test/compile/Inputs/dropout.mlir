func.func @f(%seed: tensor<i64> {tessel.name = "mask_seed", tessel.init = "int:0:1000"}, %x: tensor<16x24xf32> {tessel.name = "x"}) -> (tensor<16x24xf32> {tessel.name = "y"}, tensor<16x24xbf16> {tessel.name = "m"}) {
  %m = tessel.dropout_mask %seed, rate = 0.3 : (tensor<i64>) -> tensor<16x24xf32>
  %y = tessel.mul %x, %m : tensor<16x24xf32>
  %m16 = tessel.dropout_mask %seed, rate = 0.5 : (tensor<i64>) -> tensor<16x24xbf16>
  return %y, %m16 : tensor<16x24xf32>, tensor<16x24xbf16>
}
