// RUN: tessel-opt %s --tessel-lower-to-linalg | FileCheck %s
// RUN: tessel-opt %s --tessel-lower-to-linalg=overlap-collectives=false | FileCheck %s --check-prefix=BLOCKING
// RUN: tessel-opt %s --tessel-lower-to-linalg | tessel-opt --tessel-outline-segments=max-ops=4 | FileCheck %s --check-prefix=PIECES

// A collective with compute between it and the first op that reads its
// result is split into a start and a wait there (runtime/Abi.h): the wait
// reads the input too (so bufferization keeps it unchanged until then) and
// returns the result, which every later user reads.

tessel.mesh @mesh ["dp"=2, "tp"=2]

func.func @overlapped(%g: tensor<64xf32>, %x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<64xf32>, tensor<8x8xf32>) {
  %r = tessel.all_reduce sum %g on @mesh ["dp"] : tensor<64xf32>
  %y = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = tessel.add %y, %x : tensor<8x8xf32>
  %u = tessel.add %r, %g : tensor<64xf32>
  return %u, %z : tensor<64xf32>, tensor<8x8xf32>
}
// CHECK-LABEL: func.func @overlapped(
// CHECK-SAME:    %[[G:[^:]*]]: tensor<64xf32>
// CHECK:         %[[S:.*]] = call @[[START:__tessel_call_tessel_rt_collective_start_f32[_0-9]*]](%[[G]])
// CHECK:         call @__tessel_call_tessel_rt_gemm_f32
// CHECK:         linalg.generic
// CHECK:         %[[R:.*]] = call @[[$WAIT:__tessel_call_tessel_rt_collective_wait_f32[_0-9]*]](%[[G]], %[[S]])
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[R]], %[[G]]
// CHECK-NOT:     tessel_rt_collective
// CHECK:         return
// BLOCKING-LABEL: func.func @overlapped(
// BLOCKING:         call @__tessel_call_tessel_rt_collective_f32
// BLOCKING-NOT:     collective_start

func.func @used_at_once(%g: tensor<64xf32>) -> tensor<64xf32> {
  %r = tessel.all_reduce sum %g on @mesh ["tp"] : tensor<64xf32>
  %u = tessel.add %r, %g : tensor<64xf32>
  return %u : tensor<64xf32>
}
// Nothing to overlap: the call stays blocking.
// CHECK-LABEL: func.func @used_at_once(
// CHECK:         call @__tessel_call_tessel_rt_collective_f32
// CHECK-NOT:     collective_start
// CHECK:         return

func.func @two(%a: tensor<64xf32>, %b: tensor<64xf32>, %x: tensor<8x8xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<8x8xf32>) {
  %r = tessel.all_reduce sum %a on @mesh ["dp"] : tensor<64xf32>
  %y = tessel.dot_general %x, %x, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = tessel.all_reduce sum %b on @mesh ["dp"] : tensor<64xf32>
  %z = tessel.dot_general %y, %x, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %s, %z : tensor<64xf32>, tensor<64xf32>, tensor<8x8xf32>
}
// One collective in flight at a time: the first is waited for before the
// second starts, so every rank completes them in the order they started.
// CHECK-LABEL: func.func @two(
// CHECK:         %[[S1:.*]] = call @__tessel_call_tessel_rt_collective_start_f32{{.*}}(%arg0)
// CHECK:         call @__tessel_call_tessel_rt_gemm_f32
// CHECK-NEXT:    %[[R1:.*]] = call @__tessel_call_tessel_rt_collective_wait_f32{{.*}}(%arg0, %[[S1]])
// CHECK-NEXT:    %[[S2:.*]] = call @__tessel_call_tessel_rt_collective_start_f32{{.*}}(%arg1)
// CHECK:         call @__tessel_call_tessel_rt_gemm_f32
// CHECK-NEXT:    %[[R2:.*]] = call @__tessel_call_tessel_rt_collective_wait_f32{{.*}}(%arg1, %[[S2]])
// CHECK-NEXT:    return %[[R1]], %[[R2]]
// Cut into pieces (before bufferization), a start and its wait stay in one
// piece: the start's input must live until the wait.
// PIECES-LABEL: func.func @two(
// PIECES:         call @two_piece0(
// PIECES-NEXT:    call @two_piece1(
// PIECES-LABEL: func.func private @two_piece0(
// PIECES:         call @__tessel_call_tessel_rt_collective_start_f32
// PIECES:         call @__tessel_call_tessel_rt_collective_wait_f32
// PIECES:         return
// PIECES-LABEL: func.func private @two_piece1(
// PIECES:         call @__tessel_call_tessel_rt_collective_start_f32
// PIECES:         call @__tessel_call_tessel_rt_collective_wait_f32
// PIECES:         return

func.func @action(%a: tensor<64xf32>, %x: tensor<8x8xf32>) -> (tensor<64xf32>, tensor<8x8xf32>) attributes {tessel.regions = ["F0", "F1"]} {
  %r = tessel.all_reduce sum %a on @mesh ["dp"] : tensor<64xf32>
  %y = tessel.dot_general %x, %x, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  tessel.region 1
  %z = tessel.dot_general %y, %x, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %z : tensor<64xf32>, tensor<8x8xf32>
}
// Not across a schedule action's mark (pipeline stages are cut into pieces
// there before bufferization).
// CHECK-LABEL: func.func @action(
// CHECK:         %[[S:.*]] = call @__tessel_call_tessel_rt_collective_start_f32
// CHECK:         call @__tessel_call_tessel_rt_gemm_f32
// CHECK:         call @__tessel_call_tessel_rt_collective_wait_f32{{.*}}(%arg0, %[[S]])
// CHECK-NEXT:    call @tessel_rt_region

// A bucket's members are cut out of its all-reduce right after it (in
// tessel IR); the cuts move down to their readers, so the compute in
// between still overlaps the all-reduce.
func.func @bucket_pieces(%g: tensor<16xf32>, %x: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<2x4xf32>, tensor<8x8xf32>) {
  %r = tessel.all_reduce sum %g on @mesh ["dp"] : tensor<16xf32>
  %a = tessel.slice %r, start = [0], limit = [8], strides = [1] : (tensor<16xf32>) -> tensor<8xf32>
  %b = tessel.slice %r, start = [8], limit = [16], strides = [1] : (tensor<16xf32>) -> tensor<8xf32>
  %c = tessel.reshape %b : (tensor<8xf32>) -> tensor<2x4xf32>
  %y = tessel.dot_general %x, %x, batching = [] x [], contracting = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = tessel.add %a, %a : tensor<8xf32>
  return %u, %c, %y : tensor<8xf32>, tensor<2x4xf32>, tensor<8x8xf32>
}
// CHECK-LABEL: func.func @bucket_pieces(
// CHECK:         %[[S:.*]] = call @__tessel_call_tessel_rt_collective_start_f32
// CHECK-NOT:     tensor.extract_slice
// CHECK:         call @__tessel_call_tessel_rt_gemm_f32
// CHECK:         %[[R:.*]] = call @__tessel_call_tessel_rt_collective_wait_f32{{.*}}(%arg0, %[[S]])
// CHECK-NEXT:    tensor.extract_slice %[[R]][0]

// The wait's wrapper returns its result argument as it is.
// CHECK:       func.func private @[[$WAIT]](%{{.*}}: tensor<64xf32>, %[[OUT:.*]]: tensor<64xf32>) -> tensor<64xf32>
// CHECK:         call @tessel_rt_collective_wait_f32(
// CHECK-NEXT:    return %[[OUT]]
