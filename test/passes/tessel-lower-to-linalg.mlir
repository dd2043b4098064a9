// RUN: tessel-opt %s --tessel-lower-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that element-wise ops become parallel linalg.generic ops in f32 for
// bf16 operands (computed in f32, rounded once).
func.func @elementwise_bf16(%x: tensor<4x8xbf16>, %y: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = tessel.add %x, %y : tensor<4x8xbf16>
  %1 = tessel.exp %0 : tensor<4x8xbf16>
  return %1 : tensor<4x8xbf16>
}
// CHECK-LABEL: func.func @elementwise_bf16
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           arith.addf %{{.*}} : f32
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         linalg.generic
// CHECK:           math.exp %{{.*}} : f32
// CHECK-NOT:     tessel.

// -----

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that a matmul whose left operand is stored transposed calls BLAS
// with transA instead of copying it.
func.func @weight_gradient(%x: tensor<2x3x8xf32>, %g: tensor<2x3x5xf32>) -> tensor<8x5xf32> {
  %0 = tessel.dot_general %x, %g, batching = [] x [], contracting = [0, 1] x [0, 1] : (tensor<2x3x8xf32>, tensor<2x3x5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}
// CHECK-LABEL: func.func @weight_gradient
// The result comes in its own shape (the runtime takes flat buffers), so
// a returned matmul is written straight into its out-parameter.
// CHECK:         %[[R:.*]] = call @[[GEMM:__tessel_call_tessel_rt_gemm_f32[_0-9]*]]({{.*}}) : (tensor<1x6x8xf32>, tensor<1x6x5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT:    return %[[R]]

// -----

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that an all-gather over tp on dimension 1 calls the runtime with its
// descriptor: opcode 1, axes code 2 (axis #1 + 1), rank 2, shapes, dim 1.
func.func @gather(%x: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = tessel.all_gather %x on @mesh ["tp"], dim = 1 : (tensor<4x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
// CHECK-LABEL: func.func @gather
// CHECK:         call @[[AG:__tessel_call_tessel_rt_collective_f32[_0-9]*]](%{{.*}}) : (tensor<4x3xf32>) -> tensor<4x6xf32>

// -----

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that a reduction over the last dimension is a linalg.generic with a
// reduction iterator, initialized to the identity.
func.func @reduce_max(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = tessel.reduce max %x, dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @reduce_max
// CHECK:         %[[INIT:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[INIT]] : f32)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf

// -----

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that the wrappers of runtime calls read their tensors through
// buffers and call BLAS with the canonical [batch, M, K] x [batch, K, N]
// shapes and transA = 1 (no transposed copy); the all-gather's descriptor
// is [opcode 1, kind 0, group 0 (the module's first: tp), rank 2, 4, 3, 4,
// 6, dim 1, 0, 0 pairs].
func.func @wrappers(%x: tensor<2x3x8xf32>, %g: tensor<2x3x5xf32>, %y: tensor<4x3xf32>) -> (tensor<8x5xf32>, tensor<4x6xf32>) {
  %0 = tessel.dot_general %x, %g, batching = [] x [], contracting = [0, 1] x [0, 1] : (tensor<2x3x8xf32>, tensor<2x3x5xf32>) -> tensor<8x5xf32>
  %1 = tessel.all_gather %y on @mesh ["tp"], dim = 1 : (tensor<4x3xf32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<8x5xf32>, tensor<4x6xf32>
}
// CHECK-LABEL: func.func @wrappers
// CHECK:       func.func private @__tessel_call_tessel_rt_gemm_f32{{.*}}(%[[A:.*]]: tensor<1x6x8xf32>, %[[B:.*]]: tensor<1x6x5xf32>) -> tensor<8x5xf32>
// CHECK-DAG:     bufferization.to_buffer %[[A]] read_only
// CHECK-DAG:     %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x5xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK-DAG:     %[[FIVE:.*]] = arith.constant 5 : i64
// CHECK-DAG:     %[[SIX:.*]] = arith.constant 6 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         call @tessel_rt_gemm_f32({{.*}}, %[[ONE]], %[[EIGHT]], %[[FIVE]], %[[SIX]], %{{.*}}, %[[ZERO]])
// CHECK:         bufferization.to_tensor %[[C]] restrict writable
// CHECK:       func.func private @__tessel_call_tessel_rt_collective_f32
// CHECK:         arith.constant dense<[1, 0, 0, 2, 4, 3, 4, 6, 1, 0, 0]> : tensor<11xi64>
// CHECK:         call @tessel_rt_collective_f32

// -----

tessel.mesh @mesh ["pp"=2, "dp"=2]

// Tests that sends, receives and axis_index become runtime calls that name
// their communicator group by its index in the module's `tessel.groups`
// (pp is group 0, dp group 1): send [opcode 5, 0, group 0, rank 2, 4, 8,
// 4, 8, target 1, channel 3, 0], recv [opcode 6, ..., source 0, channel 3,
// 0], and tessel_rt_axis_index(1).
func.func @p2p(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<i32>) {
  tessel.send %x on @mesh ["pp"], target = 1, channel = 3 : tensor<4x8xf32>
  %r = tessel.recv on @mesh ["pp"], source = 0, channel = 3 : tensor<4x8xf32>
  %i = tessel.axis_index on @mesh ["dp"] : tensor<i32>
  return %r, %i : tensor<4x8xf32>, tensor<i32>
}
// CHECK-LABEL: module attributes {tessel.groups = [{axes = ["pp"], mesh = "mesh"}, {axes = ["dp"], mesh = "mesh"}]}
// CHECK:       func.func @p2p
// CHECK:         call @__tessel_call_tessel_rt_send_f32(%{{.*}}) : (tensor<4x8xf32>) -> ()
// CHECK:         %[[R:.*]] = call @__tessel_call_tessel_rt_recv_f32() : () -> tensor<4x8xf32>
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @tessel_rt_axis_index(%[[ONE]])
// CHECK:       func.func private @__tessel_call_tessel_rt_send_f32(%{{.*}}: tensor<4x8xf32>)
// CHECK:         arith.constant dense<[5, 0, 0, 2, 4, 8, 4, 8, 1, 3, 0]> : tensor<11xi64>
// CHECK:         call @tessel_rt_send_f32
// CHECK:       func.func private @__tessel_call_tessel_rt_recv_f32() -> tensor<4x8xf32>
// CHECK:         arith.constant dense<[6, 0, 0, 2, 4, 8, 4, 8, 0, 3, 0]> : tensor<11xi64>
// CHECK:         call @tessel_rt_recv_f32

// -----

tessel.mesh @mesh ["pp"=2, "dp"=2]

// Tests that shard_slice takes rows [g*2, g*2+2) of this device's tensor,
// g its group index over dp (group 0 here): an extract_slice at a dynamic
// offset, no communication.
func.func @shard_slice(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %s = tessel.shard_slice %x on @mesh ["dp"], dim = 0 : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @shard_slice
// CHECK:         %[[G:.*]] = call @tessel_rt_axis_index(%{{.*}}) : (i64) -> i64
// CHECK:         %[[OFF:.*]] = arith.muli %[[G]], %{{.*}} : i64
// CHECK:         %[[I:.*]] = arith.index_cast %[[OFF]] : i64 to index
// CHECK:         tensor.extract_slice %{{.*}}[%[[I]], 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-NOT:     tessel_rt_collective

// -----

tessel.mesh @mesh ["dp"=2, "tp"=2]

// Tests that the same runtime call made twice (the same matmul in every
// layer) goes through one wrapper function, and that a call that differs
// (another shape) gets a wrapper of its own; no key attribute is left.
func.func @repeated(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tessel.dot_general %0, %w, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = tessel.dot_general %1, %v, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @repeated
// CHECK:         call @[[SQ:__tessel_call_tessel_rt_gemm_f32[_0-9]*]](
// CHECK:         call @[[SQ]](
// CHECK:         call @[[NARROW:__tessel_call_tessel_rt_gemm_f32[_0-9]*]](
// CHECK-NOT:     call @[[SQ]]
// CHECK:         func.func private @[[SQ]](
// CHECK-NOT:     tessel.runtime_call
// CHECK:         func.func private @[[NARROW]](
// CHECK-NOT:     func.func private @__tessel_call
// CHECK-NOT:     tessel.runtime_call
