// A broadcast of 16-bit floats: LLVM keeps the loaded value in a phi across
// the unrolled copy loop, and the x86 backend held it promoted to f32 and
// called __truncsfbf2 / __truncsfhf2 to store it (the link failed; seed 307,
// program 440). Loads, stores and phis of half words now move i16 bits.
func.func @f(%a: tensor<6x1xbf16> {tessel.name = "a", tessel.init = "normal:1"},
             %h: tensor<6x1xf16> {tessel.name = "h", tessel.init = "normal:1"})
    -> (tensor<6x8x3x12xbf16> {tessel.name = "ab"}, tensor<6x8x3x12xf16> {tessel.name = "hb"}) {
  %0 = tessel.broadcast_in_dim %a, dims = [0, 2] : (tensor<6x1xbf16>) -> tensor<6x8x3x12xbf16>
  %1 = tessel.broadcast_in_dim %h, dims = [0, 2] : (tensor<6x1xf16>) -> tensor<6x8x3x12xf16>
  return %0, %1 : tensor<6x8x3x12xbf16>, tensor<6x8x3x12xf16>
}
