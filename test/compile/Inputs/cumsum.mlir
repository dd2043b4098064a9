// cumsum along the outer dimension (its slices are views at a dynamic
// offset, lowered through affine.apply) and the inner one; i32, bf16, f32.
func.func @f(%n: tensor<3x5xi32> {tessel.name = "n", tessel.init = "int:-4:9"}, %h: tensor<3x5xbf16> {tessel.name = "h"}, %x: tensor<4x6xf32> {tessel.name = "x"}) -> (tensor<3x5xi32> {tessel.name = "a"}, tensor<3x5xbf16> {tessel.name = "b"}, tensor<4x6xf32> {tessel.name = "c"}) {
  %a = tessel.cumsum %n, dim = 1 : tensor<3x5xi32>
  %b = tessel.cumsum %h, dim = 0 : tensor<3x5xbf16>
  %c = tessel.cumsum %x, dim = 0 : tensor<4x6xf32>
  return %a, %b, %c : tensor<3x5xi32>, tensor<3x5xbf16>, tensor<4x6xf32>
}
