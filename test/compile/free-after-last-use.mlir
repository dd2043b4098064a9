// tessel-free-after-last-use: a dealloc moves up to just after the last op
// of its block that uses the buffer or a view of it (here a loop, a
// collapse_shape view and a call); it stays where a raw pointer of the
// buffer escapes, and where the buffer is not allocated in its block.
// RUN: tessel-opt %s --tessel-free-after-last-use | FileCheck %s

func.func private @use(memref<16xf32>)
func.func private @other()
func.func private @pointer(index)

// CHECK-LABEL: func.func @moves
// CHECK:      %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK:      %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK-NEXT: call @use(%[[V]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @other()
// CHECK-NEXT: call @other()
// CHECK-NEXT: return
func.func @moves(%x: f32) {
  %a = memref.alloc() : memref<4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %a[%i, %i] : memref<4x4xf32>
  }
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  call @use(%v) : (memref<16xf32>) -> ()
  call @other() : () -> ()
  call @other() : () -> ()
  memref.dealloc %a : memref<4x4xf32>
  return
}

// A buffer without uses is freed where it is made.
// CHECK-LABEL: func.func @unused
// CHECK:      %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @other()
func.func @unused() {
  %a = memref.alloc() : memref<8xf32>
  call @other() : () -> ()
  memref.dealloc %a : memref<8xf32>
  return
}

// CHECK-LABEL: func.func @pointer_escapes
// CHECK:      call @pointer
// CHECK-NEXT: call @other()
// CHECK-NEXT: memref.dealloc
func.func @pointer_escapes() {
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  call @pointer(%p) : (index) -> ()
  call @other() : () -> ()
  memref.dealloc %a : memref<8xf32>
  return
}

// CHECK-LABEL: func.func @argument
// CHECK:      call @other()
// CHECK-NEXT: memref.dealloc %arg0
func.func @argument(%a: memref<8xf32>) {
  call @other() : () -> ()
  memref.dealloc %a : memref<8xf32>
  return
}
