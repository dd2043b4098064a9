// Empty operands of ops whose results are not empty: a pad that is all
// padding, and concatenates with an empty operand at either end. The
// lowering inserted the empty tensor at an offset equal to the dimension's
// size, which tensor.insert_slice refuses (seed 307, program 2930).
func.func @f(%a: tensor<0x0xbf16> {tessel.name = "a"},
             %b: tensor<3x2xf32> {tessel.name = "b", tessel.init = "normal:1"},
             %e: tensor<0x2xf32> {tessel.name = "e"})
    -> (tensor<3x1xbf16> {tessel.name = "padded"}, tensor<3x2xf32> {tessel.name = "after"},
        tensor<3x2xf32> {tessel.name = "before"}) {
  %p = tessel.pad %a, low = [2, 1], high = [1, 0], value = 1.5 : (tensor<0x0xbf16>) -> tensor<3x1xbf16>
  %c1 = tessel.concatenate %b, %e dim = 0 : (tensor<3x2xf32>, tensor<0x2xf32>) -> tensor<3x2xf32>
  %c2 = tessel.concatenate %e, %b dim = 0 : (tensor<0x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %p, %c1, %c2 : tensor<3x1xbf16>, tensor<3x2xf32>, tensor<3x2xf32>
}
