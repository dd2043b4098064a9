// Conversions to and from bf16/f16 on edge values (test/compile/float-conversions.test):
// f32 and f64 to both, both to f32 (all 65536 bit patterns), f16 to f64,
// i32 to both, and small values through both to i32.
func.func @f(%x: tensor<256xf32> {tessel.name = "x"}, %d: tensor<64xf64> {tessel.name = "d"},
             %h: tensor<65536xf16> {tessel.name = "h"}, %b: tensor<65536xbf16> {tessel.name = "b"},
             %i: tensor<16xi32> {tessel.name = "i"}, %s: tensor<64xf32> {tessel.name = "s"})
    -> (tensor<256xbf16> {tessel.name = "x_bf16"}, tensor<256xf16> {tessel.name = "x_f16"},
        tensor<64xbf16> {tessel.name = "d_bf16"}, tensor<64xf16> {tessel.name = "d_f16"},
        tensor<65536xf32> {tessel.name = "h_f32"}, tensor<65536xf32> {tessel.name = "b_f32"},
        tensor<65536xf64> {tessel.name = "h_f64"},
        tensor<16xbf16> {tessel.name = "i_bf16"}, tensor<16xf16> {tessel.name = "i_f16"},
        tensor<64xi32> {tessel.name = "s_bf16_i32"}, tensor<64xi32> {tessel.name = "s_f16_i32"}) {
  %x_bf16 = tessel.convert %x : (tensor<256xf32>) -> tensor<256xbf16>
  %x_f16 = tessel.convert %x : (tensor<256xf32>) -> tensor<256xf16>
  %d_bf16 = tessel.convert %d : (tensor<64xf64>) -> tensor<64xbf16>
  %d_f16 = tessel.convert %d : (tensor<64xf64>) -> tensor<64xf16>
  %h_f32 = tessel.convert %h : (tensor<65536xf16>) -> tensor<65536xf32>
  %b_f32 = tessel.convert %b : (tensor<65536xbf16>) -> tensor<65536xf32>
  %h_f64 = tessel.convert %h : (tensor<65536xf16>) -> tensor<65536xf64>
  %i_bf16 = tessel.convert %i : (tensor<16xi32>) -> tensor<16xbf16>
  %i_f16 = tessel.convert %i : (tensor<16xi32>) -> tensor<16xf16>
  %sb = tessel.convert %s : (tensor<64xf32>) -> tensor<64xbf16>
  %sbi = tessel.convert %sb : (tensor<64xbf16>) -> tensor<64xi32>
  %sh = tessel.convert %s : (tensor<64xf32>) -> tensor<64xf16>
  %shi = tessel.convert %sh : (tensor<64xf16>) -> tensor<64xi32>
  return %x_bf16, %x_f16, %d_bf16, %d_f16, %h_f32, %b_f32, %h_f64, %i_bf16, %i_f16, %sbi, %shi
      : tensor<256xbf16>, tensor<256xf16>, tensor<64xbf16>, tensor<64xf16>, tensor<65536xf32>,
        tensor<65536xf32>, tensor<65536xf64>, tensor<16xbf16>, tensor<16xf16>, tensor<64xi32>, tensor<64xi32>
}
