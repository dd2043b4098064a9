// tessel-outline-segments: a function of more than max-ops top-level ops
// becomes calls of private functions of max-ops ops each (the last piece
// holds the rest), each taking the values it reads from before and
// returning those read after it, with bare-pointer calls; constants are
// cloned into the pieces that read them. A function within the limit is
// left as it is.
// RUN: tessel-opt %s --tessel-outline-segments=max-ops=2 | FileCheck %s

// CHECK-LABEL: func.func @long(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>
// CHECK: %[[A:.*]] = call @long_piece0(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[B:.*]]:2 = call @long_piece1(%[[A]], %[[X]])
// CHECK: %[[C:.*]] = call @long_piece2(%[[B]]#1, %[[B]]#0)
// CHECK: return %[[C]]
// CHECK: func.func private @long_piece0(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> attributes {llvm.bareptr = true}
// CHECK-NEXT: arith.constant dense<2.0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: return
// The constant is cloned into the piece that reads it.
// CHECK: func.func private @long_piece1({{.*}}) -> (tensor<4xf32>, tensor<4xf32>) attributes {llvm.bareptr = true}
// CHECK-NEXT: arith.constant dense<2.0
// CHECK: func.func private @long_piece2({{.*}}) -> tensor<4xf32> attributes {llvm.bareptr = true}
func.func @long(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %a = arith.mulf %x, %c : tensor<4xf32>
  %b = arith.addf %a, %x : tensor<4xf32>
  %d = arith.mulf %b, %c : tensor<4xf32>
  %e = arith.subf %d, %b : tensor<4xf32>
  %f = arith.addf %e, %d : tensor<4xf32>
  return %f : tensor<4xf32>
}

// CHECK-LABEL: func.func @short(
// CHECK-NOT: call
func.func @short(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.addf %x, %x : tensor<4xf32>
  return %a : tensor<4xf32>
}
