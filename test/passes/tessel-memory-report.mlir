// RUN: tessel-opt %s --tessel-memory-report -o /dev/null | FileCheck %s
// RUN: tessel-opt %s --tessel-memory-report="func=f format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: not tessel-opt %s --tessel-memory-report=func=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Arguments: 2 x 1024 floats = 8192 bytes. %a (4096 B) lives until %c, %b
// (4096 B) until %d: after %c three values (12288 B) are live, the peak;
// %a dies there. The last forward op is %b: %a and %b are live after it.
// CHECK: Memory of @f:
// CHECK-NEXT: arguments: 8192 bytes (8.00 KiB)
// CHECK-NEXT: peak of computed: 12288 bytes (12.00 KiB) at op 2 (tessel.add, backward_input)
// CHECK-NEXT: kept for backward: 8192 bytes (8.00 KiB)
// A function without roles has no forward/backward boundary.
// CHECK: Memory of @g:
// CHECK-NEXT: arguments: 4096 bytes
// CHECK-NEXT: peak of computed: 4096 bytes
// CHECK-NOT: kept for backward

// JSON: "argument_bytes": 8192,
// JSON: "function": "f",
// JSON: "kept_for_backward_bytes": 8192,
// JSON: "peak_bytes": 12288
// JSON-NOT: "g"

// NOFUNC: no function @nope to report on

func.func @f(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = tessel.exp %x {tessel.role = "forward"} : tensor<32x32xf32>
  %b = tessel.mul %a, %y {tessel.role = "forward"} : tensor<32x32xf32>
  %c = tessel.add %a, %b {tessel.role = "backward_input"} : tensor<32x32xf32>
  %d = tessel.sub %c, %b {tessel.role = "backward_weight"} : tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}
func.func @g(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = tessel.exp %x : tensor<32x32xf32>
  return %a : tensor<32x32xf32>
}
