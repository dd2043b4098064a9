// Reductions with few outputs over many elements, which the cuda target
// splits in two parallel steps (tessel-split-reductions): full sums, max,
// min and mean over one and several dimensions, a row sum of few long rows,
// bf16 and integer inputs, a size that 1024 does not divide, and a softmax
// cross-entropy over a long vocabulary.
func.func @f(%x: tensor<64x1024xf32> {tessel.name = "x"},
             %h: tensor<32x2048xbf16> {tessel.name = "h"},
             %n: tensor<48000xi32> {tessel.name = "n", tessel.init = "int:-50:50"},
             %odd: tensor<3x50304xf32> {tessel.name = "odd"},
             %labels: tensor<3xi32> {tessel.name = "labels", tessel.init = "int:0:50304"})
    -> (tensor<f32> {tessel.name = "sum"}, tensor<f32> {tessel.name = "max"},
        tensor<f32> {tessel.name = "min"}, tensor<f32> {tessel.name = "mean"},
        tensor<4xf32> {tessel.name = "rows"}, tensor<bf16> {tessel.name = "hsum"},
        tensor<i32> {tessel.name = "nsum"}, tensor<3xf32> {tessel.name = "oddsum"},
        tensor<f32> {tessel.name = "ce"}) {
  %sum = tessel.reduce sum %x, dims = [0, 1] : (tensor<64x1024xf32>) -> tensor<f32>
  %max = tessel.reduce max %x, dims = [0, 1] : (tensor<64x1024xf32>) -> tensor<f32>
  %min = tessel.reduce min %x, dims = [0, 1] : (tensor<64x1024xf32>) -> tensor<f32>
  %mean = tessel.reduce mean %x, dims = [0, 1] : (tensor<64x1024xf32>) -> tensor<f32>
  %x4 = tessel.reshape %x : (tensor<64x1024xf32>) -> tensor<4x16384xf32>
  %rows = tessel.reduce sum %x4, dims = [1] : (tensor<4x16384xf32>) -> tensor<4xf32>
  %hsum = tessel.reduce sum %h, dims = [0, 1] : (tensor<32x2048xbf16>) -> tensor<bf16>
  %nsum = tessel.reduce sum %n, dims = [0] : (tensor<48000xi32>) -> tensor<i32>
  %oddsum = tessel.reduce sum %odd, dims = [1] : (tensor<3x50304xf32>) -> tensor<3xf32>
  %ce = tessel.softmax_cross_entropy %odd, %labels, ignore_index = -1, reduction = mean : (tensor<3x50304xf32>, tensor<3xi32>) -> tensor<f32>
  return %sum, %max, %min, %mean, %rows, %hsum, %nsum, %oddsum, %ce : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<bf16>, tensor<i32>, tensor<3xf32>, tensor<f32>
}
