// One bf16 matmul of 8192^3 (1.1 TFLOP): bench/gpu/check.sh times it as a
// compiled program (cuBLASLt through libtessel_rt) next to torch.matmul.
func.func @gemm(%a: tensor<8192x8192xbf16> {tessel.name = "a", tessel.init = "normal:1.0"},
                %b: tensor<8192x8192xbf16> {tessel.name = "b", tessel.init = "normal:1.0"})
    -> (tensor<8192x8192xbf16> {tessel.name = "c"}) {
  %c = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  return %c : tensor<8192x8192xbf16>
}
