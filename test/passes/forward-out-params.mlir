// RUN: tessel-opt %s --tessel-forward-out-params --split-input-file | FileCheck %s

// A buffer written by a call and copied into the out-parameter at the end
// becomes the out-parameter (a matmul's runtime call writes in place).
func.func private @gemm(memref<4xf32>)
// CHECK-LABEL: func.func @forwarded
// CHECK-SAME:    (%[[OUT:.*]]: memref<4xf32>)
// CHECK-NEXT:    call @gemm(%[[OUT]])
// CHECK-NEXT:    return
func.func @forwarded(%out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  call @gemm(%a) : (memref<4xf32>) -> ()
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Not when the buffer is read after the copy, or the out-parameter is used
// elsewhere, or the types differ.
func.func private @gemm(memref<4xf32>)
func.func private @read(memref<4xf32>)
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.copy
func.func @kept(%out: memref<4xf32>, %out2: memref<4xf32>, %out3: memref<4xf32, strided<[1], offset: ?>>) {
  %a = memref.alloc() : memref<4xf32>
  call @gemm(%a) : (memref<4xf32>) -> ()
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  call @read(%a) : (memref<4xf32>) -> ()
  %b = memref.alloc() : memref<4xf32>
  call @gemm(%b) : (memref<4xf32>) -> ()
  call @read(%out2) : (memref<4xf32>) -> ()
  memref.copy %b, %out2 : memref<4xf32> to memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  call @gemm(%c) : (memref<4xf32>) -> ()
  memref.copy %c, %out3 : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
  return
}
