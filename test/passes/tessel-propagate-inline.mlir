// RUN: tessel-opt %s --inline --symbol-dce --tessel-propagate | FileCheck %s

// Tests the documented route through function calls: inline, then
// propagate (tessel ops are inlinable).
// CHECK-LABEL: func.func @forward
// CHECK-NOT: func.call
// CHECK: tessel.exp {{.*}}{tessel.sharding = #tessel.sharding<@mesh, [{"dp", ?}, {?}]>}
// CHECK-NOT: func.func private @block
tessel.mesh @mesh ["dp"=2]
func.func private @block(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = tessel.exp %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func @forward(%x: tensor<8x4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<8x4xf32> {
  %0 = func.call @block(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
