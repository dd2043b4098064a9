// tessel-split-reductions (the cuda pipeline's first step): a reduction to
// one value over many elements becomes 1024 interleaved partial reductions
// (parallel) and their combination; adjacent reduction dimensions are
// collapsed first. Reductions with many outputs, or short ones, stay.
// RUN: tessel-opt %s --tessel-lower-to-linalg --tessel-split-reductions | FileCheck %s

// CHECK-LABEL: func.func @full
// CHECK: tensor.collapse_shape {{.*}} into tensor<65536xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<64x1024xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs({{.*}} : tensor<1024xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
func.func @full(%x: tensor<64x1024xf32>) -> tensor<f32> {
  %s = tessel.reduce sum %x, dims = [0, 1] : (tensor<64x1024xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// CHECK-LABEL: func.func @odd
// CHECK: tensor.expand_shape {{.*}} into tensor<3x393x128xf32>
func.func @odd(%x: tensor<3x50304xf32>) -> tensor<3xf32> {
  %s = tessel.reduce max %x, dims = [1] : (tensor<3x50304xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// CHECK-LABEL: func.func @many_outputs
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @many_outputs(%x: tensor<8192x1024xf32>) -> tensor<8192xf32> {
  %s = tessel.reduce sum %x, dims = [1] : (tensor<8192x1024xf32>) -> tensor<8192xf32>
  return %s : tensor<8192xf32>
}

// CHECK-LABEL: func.func @short
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @short(%x: tensor<4x1024xf32>) -> tensor<f32> {
  %s = tessel.reduce sum %x, dims = [0, 1] : (tensor<4x1024xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
