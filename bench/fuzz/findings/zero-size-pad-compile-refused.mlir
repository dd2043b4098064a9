// Status: fixed by 491d87b ("Zero-element tensors (found by bench/fuzz/fuzz.py)"); this
// file now passes the whole pipeline with the tools built from it.
// Found by bench/fuzz/fuzz.py (seed 3, program 80; shrunk by hand): tessel-compile
// refuses a pad of a tensor with a zero-size dimension (the lowering emits a
// tensor.insert_slice whose static offset is out of bounds of the empty
// result; MLIR's verifier rejects it). The interpreter runs it
// (r0: f32[5, 0] = []); propagation and partitioning pass.
//
//   tessel-interp zero-size-pad-compile-refused.mlir --func f --save ref.st   # ok
//   tessel-compile zero-size-pad-compile-refused.mlir --entry f -o exe
//   -> error: offset 1 is out-of-bounds: 0 >= 0
//      note: see current operation: %3 = "tensor.insert_slice"(%arg0, %2) <{...
//         static_offsets = array<i64: 1, 0>, static_sizes = array<i64: 4, 0>, ...}>
//         : (tensor<4x0xf32>, tensor<5x0xf32>) -> tensor<5x0xf32>
//
// Expected: an executable whose output equals the interpreter's (a pad of a
// zero-element tensor is just the fill; skip the insert_slice), or a
// verifier diagnostic if zero-size tensors are not supported at all.
func.func @f(%a: tensor<4x0xf32> {tessel.name = "a"}) -> (tensor<5x0xf32> {tessel.name = "r0"}) {
  %v = tessel.pad %a, low = [1, 0], high = [0, 0], value = -2.5 : (tensor<4x0xf32>) -> tensor<5x0xf32>
  return %v : tensor<5x0xf32>
}
