// tessel-fuse-elementwise: upstream's element-wise fusion, except across the
// schedule actions of a pipeline stage (tessel_rt_region marks): the
// running sum of a gradient over two microbatches stays one add per action,
// while the ops within one action still fuse.
// RUN: tessel-opt %s --tessel-fuse-elementwise | FileCheck %s

#id = affine_map<(d0) -> (d0)>
func.func private @tessel_rt_region(i64)

// CHECK-LABEL: func.func @actions
// CHECK:       call @tessel_rt_region
// CHECK:       linalg.generic
// CHECK:         arith.mulf
// CHECK-NEXT:    arith.addf
// CHECK:       call @tessel_rt_region
// CHECK:       linalg.generic
// CHECK-NOT:     arith.mulf
// CHECK:         arith.addf
// CHECK-NOT:   linalg.generic
func.func @actions(%g0: tensor<8xf32>, %g1: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %e = tensor.empty() : tensor<8xf32>
  call @tessel_rt_region(%c0) : (i64) -> ()
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%sq, %g0 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  call @tessel_rt_region(%c1) : (i64) -> ()
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s0, %g1 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s1 : tensor<8xf32>
}

// Without marks, the same fuses into one generic.
// CHECK-LABEL: func.func @no_actions
// CHECK:       linalg.generic
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK:         arith.addf
// CHECK-NOT:   linalg.generic
func.func @no_actions(%g0: tensor<8xf32>, %g1: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%sq, %g0 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s0, %g1 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s1 : tensor<8xf32>
}
