// Hand-worked edge cases of the op semantics (TesselOps.td), one function
// each; numpy-ops.test covers the bulk against numpy.
// RUN: tessel-interp %s --func gather_out_of_range --print | FileCheck %s --check-prefix=GATHER
// RUN: tessel-interp %s --func scatter_add_repeats --print | FileCheck %s --check-prefix=SCATTER
// RUN: tessel-interp %s --func cross_entropy_ignore --print | FileCheck %s --check-prefix=CE
// RUN: tessel-interp %s --func cross_entropy_all_ignored --print | FileCheck %s --check-prefix=CE0
// RUN: tessel-interp %s --func top_k_ties --print | FileCheck %s --check-prefix=TOPK
// RUN: tessel-interp %s --func softmax_all_masked --print | FileCheck %s --check-prefix=SOFTMAX
// RUN: tessel-interp %s --func int_division --print | FileCheck %s --check-prefix=DIV
// RUN: tessel-interp %s --func convert_saturates --print | FileCheck %s --check-prefix=CONVERT
// RUN: tessel-interp %s --func bf16_rounding --print | FileCheck %s --check-prefix=BF16
// RUN: tessel-interp %s --func f16_rounding --print | FileCheck %s --check-prefix=F16
// RUN: tessel-interp %s --func i32_wraps --print | FileCheck %s --check-prefix=WRAP
// RUN: tessel-interp %s --func one_hot_out_of_range --print | FileCheck %s --check-prefix=ONEHOT
// RUN: tessel-interp %s --func dropout_rate_zero --print | FileCheck %s --check-prefix=DROP0
// RUN: tessel-interp %s --func dropout_is_sliceable --print | FileCheck %s --check-prefix=DROPSLICE
// RUN: tessel-interp %s --func reduce_empty --print | FileCheck %s --check-prefix=EMPTY
// RUN: tessel-interp %s --func nan_propagates --print | FileCheck %s --check-prefix=NAN
// RUN: tessel-interp %s --func call_and_cumsum --print | FileCheck %s --check-prefix=CALL

// Tests that out-of-range and negative indices gather zeros.
// GATHER: result0: f32[4, 2] = [3, 4, 0, 0, 0, 0, 1, 2]
func.func @gather_out_of_range() -> tensor<4x2xf32> {
  %t = tessel.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %i = tessel.constant dense<[1, 2, -1, 0]> : tensor<4xi32>
  %r = tessel.gather %t[%i], axis = 0 : (tensor<2x2xf32>, tensor<4xi32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// Tests that repeated indices accumulate and out-of-range ones are dropped.
// SCATTER: result0: f32[3] = [10, 6, 0]
func.func @scatter_add_repeats() -> tensor<3xf32> {
  %b = tessel.constant dense<[0.0, 1.0, 0.0]> : tensor<3xf32>
  %i = tessel.constant dense<[0, 1, 0, 7]> : tensor<4xi32>
  %u = tessel.constant dense<[4.0, 5.0, 6.0, 100.0]> : tensor<4xf32>
  %r = tessel.scatter_add %b[%i], %u, axis = 0 : (tensor<3xf32>, tensor<4xi32>, tensor<4xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// Tests that ignored positions drop out of the mean: uniform logits over 4
// classes give ln(4) = 1.386294 per counted position.
// CE: result0: f32[] = 1.386294
func.func @cross_entropy_ignore() -> tensor<f32> {
  %l = tessel.constant dense<0.0> : tensor<3x4xf32>
  %t = tessel.constant dense<[2, -100, 9]> : tensor<3xi32>
  %r = tessel.softmax_cross_entropy %l, %t, ignore_index = -100, reduction = mean : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<f32>
  return %r : tensor<f32>
}

// Tests that a mean over no counted position is 0, not NaN.
// CE0: result0: f32[] = 0
func.func @cross_entropy_all_ignored() -> tensor<f32> {
  %l = tessel.constant dense<1.0> : tensor<2x4xf32>
  %t = tessel.constant dense<-100> : tensor<2xi32>
  %r = tessel.softmax_cross_entropy %l, %t, ignore_index = -100, reduction = mean : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
  return %r : tensor<f32>
}

// Tests that top_k is descending and ties go to the lower index.
// TOPK: result0: f32[3] = [5, 5, 2]
// TOPK: result1: i32[3] = [1, 3, 0]
func.func @top_k_ties() -> (tensor<3xf32>, tensor<3xi32>) {
  %x = tessel.constant dense<[2.0, 5.0, 1.0, 5.0, 2.0]> : tensor<5xf32>
  %v, %i = tessel.top_k %x, k = 3 : (tensor<5xf32>) -> (tensor<3xf32>, tensor<3xi32>)
  return %v, %i : tensor<3xf32>, tensor<3xi32>
}

// Tests that a fully masked softmax row gives zeros, not NaN.
// SOFTMAX: result0: f32[2, 2] = [0, 0, 0.2689414, 0.7310586]
func.func @softmax_all_masked() -> tensor<2x2xf32> {
  %x = tessel.constant dense<[[0xFF800000, 0xFF800000], [0.0, 1.0]]> : tensor<2x2xf32>
  %r = tessel.softmax %x, dim = 1 : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// Tests truncation toward zero and division by zero giving 0.
// DIV: result0: i32[4] = [-3, 3, 0, -2]
func.func @int_division() -> tensor<4xi32> {
  %a = tessel.constant dense<[-7, 7, 5, -7]> : tensor<4xi32>
  %b = tessel.constant dense<[2, 2, 0, 3]> : tensor<4xi32>
  %r = tessel.div %a, %b : tensor<4xi32>
  return %r : tensor<4xi32>
}

// Tests float-to-int truncation, saturation and NaN -> 0.
// CONVERT: result0: i32[4] = [-2, 2147483647, -2147483648, 0]
func.func @convert_saturates() -> tensor<4xi32> {
  %x = tessel.constant dense<[-2.7, 3.0e10, -3.0e10, 0x7FC00000]> : tensor<4xf32>
  %r = tessel.convert %x : (tensor<4xf32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// Tests round-to-nearest-even into bf16: 1 + 2^-8 is a tie (to 1), 1 + 3*2^-9
// rounds up to 1 + 2^-7, and sums are rounded once per op.
// BF16: result0: bf16[3] = [1, 1.007812, 2]  sum=4.0078125
func.func @bf16_rounding() -> tensor<3xbf16> {
  %x = tessel.constant dense<[1.00390625, 1.005859375, 1.0]> : tensor<3xf32>
  %b = tessel.convert %x : (tensor<3xf32>) -> tensor<3xbf16>
  %one = tessel.constant dense<[0.0, 0.0, 1.0]> : tensor<3xbf16>
  %r = tessel.add %b, %one : tensor<3xbf16>
  return %r : tensor<3xbf16>
}

// Tests f16 rounding (1/3 -> 0x3555 = 0.333251953125) and overflow to inf.
// F16: result0: f16[2] = [0.333252, inf]
func.func @f16_rounding() -> tensor<2xf16> {
  %x = tessel.constant dense<[0.33333333, 70000.0]> : tensor<2xf32>
  %r = tessel.convert %x : (tensor<2xf32>) -> tensor<2xf16>
  return %r : tensor<2xf16>
}

// Tests two's complement wrapping of i32 arithmetic.
// WRAP: result0: i32[1] = [-2147483648]
func.func @i32_wraps() -> tensor<1xi32> {
  %a = tessel.constant dense<2147483647> : tensor<1xi32>
  %b = tessel.constant dense<1> : tensor<1xi32>
  %r = tessel.add %a, %b : tensor<1xi32>
  return %r : tensor<1xi32>
}

// Tests that an index outside the depth gives a row of zeros.
// ONEHOT: result0: f32[2, 3] = [0, 0, 1, 0, 0, 0]
func.func @one_hot_out_of_range() -> tensor<2x3xf32> {
  %i = tessel.constant dense<[2, 3]> : tensor<2xi32>
  %r = tessel.one_hot %i : (tensor<2xi32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// Tests that rate 0 keeps everything with scale 1.
// DROP0: result0: f32[4] = [1, 1, 1, 1]
func.func @dropout_rate_zero() -> tensor<4xf32> {
  %s = tessel.constant dense<7> : tensor<i64>
  %r = tessel.dropout_mask %s, rate = 0.0 : (tensor<i64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Tests that the mask depends on the linear index only: the mask of a
// [2, 8] tensor, flattened, equals the mask of a [16] tensor; values are 0
// or 1/(1-0.5) = 2 and the difference is exactly zero.
// DROPSLICE: result0: f32[16] = [0, 0, 0, 0, 0, 0, 0, 0, ...]  sum=0 abs_sum=0
// DROPSLICE: result1: f32[] = {{[0-9]+}}
func.func @dropout_is_sliceable() -> (tensor<16xf32>, tensor<f32>) {
  %s = tessel.constant dense<42> : tensor<i64>
  %a = tessel.dropout_mask %s, rate = 0.5 : (tensor<i64>) -> tensor<2x8xf32>
  %b = tessel.dropout_mask %s, rate = 0.5 : (tensor<i64>) -> tensor<16xf32>
  %f = tessel.reshape %a : (tensor<2x8xf32>) -> tensor<16xf32>
  %d = tessel.sub %f, %b : tensor<16xf32>
  %n = tessel.reduce sum %b, dims = [0] : (tensor<16xf32>) -> tensor<f32>
  return %d, %n : tensor<16xf32>, tensor<f32>
}

// Tests identities of reductions over no elements.
// EMPTY: result0: f32[2] = [0, 0]
// EMPTY: result1: f32[2] = [-inf, -inf]
func.func @reduce_empty() -> (tensor<2xf32>, tensor<2xf32>) {
  %x = tessel.constant dense<> : tensor<2x0xf32>
  %s = tessel.reduce sum %x, dims = [1] : (tensor<2x0xf32>) -> tensor<2xf32>
  %m = tessel.reduce max %x, dims = [1] : (tensor<2x0xf32>) -> tensor<2xf32>
  return %s, %m : tensor<2xf32>, tensor<2xf32>
}

// Tests that max and a max-reduction propagate NaN.
// NAN: result0: f32[2] = [nan, 3]
// NAN: result1: f32[] = nan
func.func @nan_propagates() -> (tensor<2xf32>, tensor<f32>) {
  %a = tessel.constant dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %b = tessel.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %m = tessel.max %a, %b : tensor<2xf32>
  %r = tessel.reduce max %a, dims = [0] : (tensor<2xf32>) -> tensor<f32>
  return %m, %r : tensor<2xf32>, tensor<f32>
}

// Tests func.call and an inclusive cumsum.
// CALL: result0: i64[4] = [1, 3, 6, 10]
func.func private @running(%x: tensor<4xi64>) -> tensor<4xi64> {
  %r = tessel.cumsum %x, dim = 0 : tensor<4xi64>
  return %r : tensor<4xi64>
}
func.func @call_and_cumsum() -> tensor<4xi64> {
  %x = tessel.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %r = func.call @running(%x) : (tensor<4xi64>) -> tensor<4xi64>
  return %r : tensor<4xi64>
}
