// Status: fixed by 491d87b ("Zero-element tensors (found by bench/fuzz/fuzz.py)"); this
// file now passes the whole pipeline with the tools built from it.
// Found by bench/fuzz/fuzz.py (seed 101, program 160; shrunk by hand):
// tessel-compile refuses a slice whose start equals the dimension's size (an
// empty result, which the slice verifier allows: 0 <= start <= limit <= size).
// The lowering emits a tensor.extract_slice with offset 3 into a dimension of
// 3, which MLIR's verifier rejects. The interpreter runs it
// (r0: f32[0, 6] = []); propagation and partitioning pass. In the fuzzed
// program the slice was dead (its result unused) and still stopped the
// compile.
//
//   tessel-interp zero-size-slice-compile-refused.mlir --func f --save ref.st   # ok
//   tessel-compile zero-size-slice-compile-refused.mlir --entry f -o exe
//   -> error: offset 0 is out-of-bounds: 3 >= 3
//      note: see current operation: %0 = "tensor.extract_slice"(%arg0) <{...
//         static_offsets = array<i64: 3, 0>, static_sizes = array<i64: 0, 6>, ...}>
//
// Same family as zero-size-pad-compile-refused.mlir (zero-size tensors in the
// CPU lowering).
func.func @f(%a: tensor<3x6xf32> {tessel.name = "a"}) -> (tensor<0x6xf32> {tessel.name = "r0"}) {
  %v = tessel.slice %a, start = [3, 0], limit = [3, 6], strides = [1, 1] : (tensor<3x6xf32>) -> tensor<0x6xf32>
  return %v : tensor<0x6xf32>
}
