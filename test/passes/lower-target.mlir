// Tests that --tessel-lower-to-linalg lowers for a registered target
// (tessel/lowering/Target.h) and names the registered ones otherwise.
// RUN: tessel-opt %s --tessel-lower-to-linalg=target=cpu | FileCheck %s --check-prefix=CPU
// RUN: not tessel-opt %s --tessel-lower-to-linalg=target=tpu 2>&1 | FileCheck %s
// CHECK: error: unknown target 'tpu'; the registered targets are: cpu
// CPU: call @__tessel_call_tessel_rt_gemm_f32
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %y = tessel.dot_general %a, %b, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
