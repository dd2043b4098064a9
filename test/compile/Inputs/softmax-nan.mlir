// softmax of slices holding NaN: all NaN, compiled and interpreted alike
// (the interpreter's max skipped NaN, so an all-NaN slice gave zeros as if
// it were all -inf; found by the random-program fuzzer, seed 304, program
// 6770). Rows: all NaN; NaN and -inf; all -inf (zeros); plain.
func.func @f(%x: tensor<4x3xf32> {tessel.name = "x", tessel.init = "normal:1.0"})
    -> (tensor<4x3xf32> {tessel.name = "p"}) {
  %c = tessel.constant dense<[[0x7FC00000, 0x7FC00000, 0x7FC00000],
                              [0x7FC00000, 0xFF800000, 0xFF800000],
                              [0xFF800000, 0xFF800000, 0xFF800000],
                              [0.5, -1.0, 2.0]]> : tensor<4x3xf32>
  %a = tessel.add %c, %x : tensor<4x3xf32>
  %p = tessel.softmax %a, dim = 1 : tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}
