// A function cut into pieces (tessel_calls_pieces) holds one buffer per
// value that crosses pieces. tessel-hide-caller-buffers turns each buffer
// that only calls and copies use into a tagged alloca, which the
// ownership-based deallocation leaves alone; tessel-free-caller-buffers
// makes it an allocation again: freed by the piece that reads it last when
// that piece is a private function called once (a dealloc of its argument,
// marked as handed over), else at the end of the block; then
// tessel-free-after-last-use moves each free to just after its last use.
// A buffer with any other use (a view) and functions without the mark are
// left to the deallocation pipeline.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(func.func(tessel-hide-caller-buffers))" | FileCheck %s --check-prefix=HIDE
// RUN: tessel-opt %s --pass-pipeline="builtin.module(func.func(tessel-hide-caller-buffers),tessel-free-caller-buffers,func.func(tessel-free-after-last-use))" | FileCheck %s --check-prefix=FREE

func.func private @piece0(memref<4xf32>, memref<4xf32>) attributes {llvm.bareptr = true}
func.func private @piece1(memref<4xf32>, memref<4xf32>) attributes {llvm.bareptr = true}
func.func private @piece2(memref<4xf32>, memref<2xf32>, memref<4xf32>) attributes {llvm.bareptr = true}
// The last reader of %d, with a body and called once: it frees %d after
// its own last use of it.
// FREE-LABEL: func.func private @piece3(
// FREE-SAME: %[[D:[^:]*]]: memref<4xf32>, %[[O:[^:]*]]: memref<4xf32>
// FREE-NEXT: memref.copy %[[D]], %[[O]]
// FREE-NEXT: memref.dealloc %[[D]] {tessel_owned_argument}
// FREE-NEXT: memref.copy %[[O]], %[[O]]
// FREE-NEXT: return
func.func private @piece3(%d: memref<4xf32>, %o: memref<4xf32>) attributes {llvm.bareptr = true} {
  memref.copy %d, %o : memref<4xf32> to memref<4xf32>
  memref.copy %o, %o : memref<4xf32> to memref<4xf32>
  return
}

// HIDE-LABEL: func.func @caller(
// HIDE: %[[A:.*]] = memref.alloca() {alignment = 64 : i64, tessel_hidden_buffer} : memref<4xf32>
// HIDE: call @piece0(%{{.*}}, %[[A]])
// HIDE: %[[B:.*]] = memref.alloca() {tessel_hidden_buffer} : memref<4xf32>
// HIDE: %[[V:.*]] = memref.alloc() : memref<4xf32>
// HIDE: memref.subview %[[V]]
// HIDE-NOT: memref.alloc()
// FREE-LABEL: func.func @caller(
// FREE-NOT: tessel_calls_pieces
// FREE: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// FREE-NEXT: call @piece0(%{{.*}}, %[[A]])
// FREE-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// FREE: call @piece1(%[[A]], %[[B]])
// FREE-NEXT: memref.dealloc %[[A]]
// FREE: memref.copy %[[B]], %{{.*}}
// FREE: call @piece2(%[[B]],
// FREE-NEXT: memref.dealloc %[[B]]
// FREE: %[[D:.*]] = memref.alloc() : memref<4xf32>
// FREE: call @piece3(%[[D]], %{{.*}})
// FREE-NOT: memref.dealloc %[[D]]
// FREE-NOT: memref.alloca
// FREE: return
func.func @caller(%x: memref<4xf32>, %out: memref<4xf32>) attributes {tessel_calls_pieces} {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  call @piece0(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = memref.alloc() : memref<4xf32>
  %v = memref.alloc() : memref<4xf32>
  %s = memref.subview %v[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  %c = memref.cast %s : memref<2xf32, strided<[1]>> to memref<2xf32>
  call @piece1(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  call @piece2(%b, %c, %out) : (memref<4xf32>, memref<2xf32>, memref<4xf32>) -> ()
  %d = memref.alloc() : memref<4xf32>
  call @piece0(%x, %d) : (memref<4xf32>, memref<4xf32>) -> ()
  call @piece3(%d, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// HIDE-LABEL: func.func @unmarked(
// HIDE: memref.alloc()
// HIDE-NOT: memref.alloca
func.func @unmarked(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  call @piece0(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
