// RUN: tessel-opt %s --tessel-train-step="compute-type=bf16 optimizer=sgd batch=x" | FileCheck %s
// RUN: tessel-opt %s --tessel-train-step="compute-type=bf16 optimizer=sgd batch=x save-f32-activations=true" | FileCheck %s --check-prefix=SAVE
// RUN: tessel-opt %s --tessel-train-step="optimizer=sgd batch=x" | FileCheck %s --check-prefix=F32

// What the backward keeps from the forward. Under bf16 compute the softmax
// runs in f32, and its probabilities are converted to bf16 for the next
// matmul; the softmax's VJP reads them back from that bf16 copy (a fresh
// convert, role "recompute") so the f32 probabilities die in the forward.
// The bias broadcast and the splat scale, which the VJPs of the muls read,
// are made again in the backward instead of being kept; the scale is a
// bf16 constant, not a converted f32 one.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[B:.*]] = tessel.broadcast_in_dim %{{.*}} {tessel.role = "forward"} : (tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK: tessel.constant {tessel.role = "forward"} dense<5.000000e-01> : tensor<4x8xbf16>
// CHECK: %[[P:.*]] = tessel.softmax %{{.*}}, dim = 1 {tessel.role = "forward"} : tensor<4x8xf32>
// CHECK: %[[P16:.*]] = tessel.convert %[[P]] {tessel.role = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK-NOT: %[[P]]{{[^0-9]}}
// CHECK: %[[P32:.*]] = tessel.convert %[[P16]] {tessel.role = "recompute"} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: tessel.mul %{{.*}}, %[[P32]] {tessel.role = "backward_input"}
// CHECK-NOT: %[[P]]{{[^0-9]}}
// CHECK: tessel.constant {tessel.role = "recompute"} dense<5.000000e-01> : tensor<4x8xbf16>
// CHECK-NOT: %[[B]]{{[^0-9]}}
// CHECK: tessel.broadcast_in_dim %{{.*}} {tessel.role = "recompute"} : (tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK-NOT: %[[B]]{{[^0-9]}}
// CHECK: return

// save-f32-activations=true: the VJP reads the f32 probabilities.
// SAVE-LABEL: func.func @train_step
// SAVE: %[[P:.*]] = tessel.softmax
// SAVE-NOT: role = "recompute"} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// SAVE: tessel.mul %{{.*}}, %[[P]] {tessel.role = "backward_input"}

// In f32 the broadcast and the constant are remade too.
// F32-LABEL: func.func @train_step
// F32: tessel.constant {tessel.role = "recompute"} dense<5.000000e-01> : tensor<4x8xf32>
// F32: tessel.broadcast_in_dim %{{.*}} {tessel.role = "recompute"} : (tensor<8xf32>) -> tensor<4x8xf32>
func.func @forward(%w: tensor<8x8xf32> {tessel.name = "w"},
                   %b: tensor<8xf32> {tessel.name = "b"},
                   %v: tensor<8x8xf32> {tessel.name = "v"},
                   %x: tensor<4x8xf32> {tessel.name = "x"}) -> tensor<f32> {
  %h = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %bb = tessel.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = tessel.mul %h, %bb : tensor<4x8xf32>
  %c = tessel.constant dense<0.5> : tensor<4x8xf32>
  %t = tessel.mul %s, %c : tensor<4x8xf32>
  %p = tessel.softmax %t, dim = 1 : tensor<4x8xf32>
  %o = tessel.dot_general %p, %v, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = tessel.reduce sum %o, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
