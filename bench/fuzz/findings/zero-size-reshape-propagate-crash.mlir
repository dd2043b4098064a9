// Status: fixed by 491d87b ("Zero-element tensors (found by bench/fuzz/fuzz.py)"); this
// file now passes the whole pipeline with the tools built from it.
// Found by bench/fuzz/fuzz.py (seed 3, program 76; shrunk by hand): a reshape
// of a zero-element tensor (here from a slice with limit == start, which the
// slice verifier allows) crashes propagation in ReshapeOp::getShardingRule
// (SIGFPE, exit 136: presumably the gcd refinement divides by a size-0
// dimension). No mesh needed. The interpreter runs it (r0: f32[0] = []).
//
//   tessel-interp zero-size-reshape-propagate-crash.mlir --func f --save ref.st   # ok
//   tessel-opt --tessel-propagate zero-size-reshape-propagate-crash.mlir
//   -> PLEASE submit a bug report ... Stack dump:
//      #4 mlir::tessel::ReshapeOp::getShardingRule()
//      #6 (anonymous namespace)::Propagator::ruleOf(mlir::Operation*)
//
// Expected: either a rule (a zero-size dimension as a need-replication
// factor) or, if zero-element tensors are unsupported, a verifier
// diagnostic; never a crash.
func.func @f(%a: tensor<1x0xf32> {tessel.name = "a"}) -> (tensor<0xf32> {tessel.name = "r0"}) {
  %v = tessel.reshape %a : (tensor<1x0xf32>) -> tensor<0xf32>
  return %v : tensor<0xf32>
}
