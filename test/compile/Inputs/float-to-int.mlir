// Float-to-integer conversions at and beyond the integer range, and of NaN
// and infinities: tessel.convert saturates and takes NaN to 0 (the
// interpreter's floatToInt); a plain fptosi gave INT_MIN on x86 (found by
// the random-program fuzzer: log of non-positive numbers, converted).
func.func @f(%x: tensor<8xf64> {tessel.name = "x", tessel.init = "int:-3:4"})
    -> (tensor<8xi32> {tessel.name = "i32"}, tensor<8xi64> {tessel.name = "i64"},
        tensor<8xi32> {tessel.name = "from_f32"}, tensor<8xi32> {tessel.name = "from_bf16"},
        tensor<8xi32> {tessel.name = "from_log"}, tensor<8xi64> {tessel.name = "from_log64"},
        tensor<8xi1> {tessel.name = "to_i1"}) {
  %c = tessel.constant dense<[-3.0e10, -2147483648.0, -2.5, -0.5, 0.7, 2147483647.0, 2.5e9, 1.0e300]> : tensor<8xf64>
  %a = tessel.convert %c : (tensor<8xf64>) -> tensor<8xi32>
  %b = tessel.convert %c : (tensor<8xf64>) -> tensor<8xi64>
  %f = tessel.convert %c : (tensor<8xf64>) -> tensor<8xf32>
  %fi = tessel.convert %f : (tensor<8xf32>) -> tensor<8xi32>
  %h = tessel.convert %c : (tensor<8xf64>) -> tensor<8xbf16>
  %hi = tessel.convert %h : (tensor<8xbf16>) -> tensor<8xi32>
  %l = tessel.log %x : tensor<8xf64>
  %li = tessel.convert %l : (tensor<8xf64>) -> tensor<8xi32>
  %ll = tessel.convert %l : (tensor<8xf64>) -> tensor<8xi64>
  %lb = tessel.convert %l : (tensor<8xf64>) -> tensor<8xi1>
  return %a, %b, %fi, %hi, %li, %ll, %lb : tensor<8xi32>, tensor<8xi64>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi64>, tensor<8xi1>
}
