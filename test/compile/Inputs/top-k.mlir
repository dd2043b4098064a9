func.func @f(%x: tensor<6x10xf32> {tessel.name = "x", tessel.init = "int:0:5"}, %y: tensor<3x4x9xbf16> {tessel.name = "y"}) -> (tensor<6x3xf32> {tessel.name = "v"}, tensor<6x3xi32> {tessel.name = "i"}, tensor<3x4x2xbf16> {tessel.name = "w"}, tensor<3x4x2xi32> {tessel.name = "j"}) {
  %v, %i = tessel.top_k %x, k = 3 : (tensor<6x10xf32>) -> (tensor<6x3xf32>, tensor<6x3xi32>)
  %w, %j = tessel.top_k %y, k = 2 : (tensor<3x4x9xbf16>) -> (tensor<3x4x2xbf16>, tensor<3x4x2xi32>)
  return %v, %i, %w, %j : tensor<6x3xf32>, tensor<6x3xi32>, tensor<3x4x2xbf16>, tensor<3x4x2xi32>
}
