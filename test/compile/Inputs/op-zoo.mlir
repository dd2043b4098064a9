// Every op the CPU backend lowers, in f32, bf16 and integer forms, in one
// function compiled with tessel-compile --entry zoo and compared with
// tessel-interp (test/compile/ops.test).
func.func @zoo(%x: tensor<4x8xf32> {tessel.name = "x"},
               %p: tensor<4x8xf32> {tessel.name = "p", tessel.init = "uniform:0.1:2"},
               %h: tensor<4x8xbf16> {tessel.name = "h"},
               %n: tensor<4x8xi32> {tessel.name = "n", tessel.init = "int:-5:5"},
               %b: tensor<8xf32> {tessel.name = "b"},
               %w: tensor<8x16xf32> {tessel.name = "w"},
               %q: tensor<2x4x8xf32> {tessel.name = "q"},
               %k: tensor<2x8x4xf32> {tessel.name = "k"},
               %logits: tensor<2x6x10xf32> {tessel.name = "logits"},
               %labels: tensor<2x6xi32> {tessel.name = "labels", tessel.init = "int:-1:11"},
               %table: tensor<10x8xf32> {tessel.name = "table"},
               %ids: tensor<2x6xi32> {tessel.name = "ids", tessel.init = "int:-2:12"},
               %g: tensor<10xf32> {tessel.name = "g"})
    -> (tensor<4x8xf32> {tessel.name = "unary"}, tensor<4x8xf32> {tessel.name = "binary"},
        tensor<4x8xbf16> {tessel.name = "bf16"}, tensor<4x8xi32> {tessel.name = "int"},
        tensor<4x12xf32> {tessel.name = "moves"}, tensor<4x16xf32> {tessel.name = "mm"},
        tensor<2x4x4xf32> {tessel.name = "bmm"}, tensor<8x16xf32> {tessel.name = "wgrad"},
        tensor<4xf32> {tessel.name = "sums"}, tensor<f32> {tessel.name = "mean"},
        tensor<2x6x10xf32> {tessel.name = "norms"}, tensor<f32> {tessel.name = "ce_mean"},
        tensor<2x6xf32> {tessel.name = "ce_none"}, tensor<f32> {tessel.name = "ce_sum"},
        tensor<2x6x8xf32> {tessel.name = "gathered"}, tensor<10x8xf32> {tessel.name = "scattered"},
        tensor<2x6x10xf32> {tessel.name = "onehot"}, tensor<4x8xi32> {tessel.name = "iota"},
        tensor<4x8xf32> {tessel.name = "cumsum"}) {
  // Unary (f32), each fed by the previous so every one matters.
  %u0 = tessel.neg %x : tensor<4x8xf32>
  %u1 = tessel.abs %u0 : tensor<4x8xf32>
  %u2 = tessel.relu %x : tensor<4x8xf32>
  %u3 = tessel.exp %u2 : tensor<4x8xf32>
  %u4 = tessel.log %p : tensor<4x8xf32>
  %u5 = tessel.sqrt %p : tensor<4x8xf32>
  %u6 = tessel.rsqrt %p : tensor<4x8xf32>
  %u7 = tessel.tanh %x : tensor<4x8xf32>
  %u8 = tessel.logistic %x : tensor<4x8xf32>
  %u9 = tessel.silu %x : tensor<4x8xf32>
  %u10 = tessel.sin %x : tensor<4x8xf32>
  %u11 = tessel.cos %x : tensor<4x8xf32>
  %u12 = tessel.gelu %x approximation = tanh : tensor<4x8xf32>
  %u13 = tessel.gelu %x approximation = erf : tensor<4x8xf32>
  %a0 = tessel.add %u1, %u3 : tensor<4x8xf32>
  %a1 = tessel.add %a0, %u4 : tensor<4x8xf32>
  %a2 = tessel.add %a1, %u5 : tensor<4x8xf32>
  %a3 = tessel.add %a2, %u6 : tensor<4x8xf32>
  %a4 = tessel.add %a3, %u7 : tensor<4x8xf32>
  %a5 = tessel.add %a4, %u8 : tensor<4x8xf32>
  %a6 = tessel.add %a5, %u9 : tensor<4x8xf32>
  %a7 = tessel.add %a6, %u10 : tensor<4x8xf32>
  %a8 = tessel.add %a7, %u11 : tensor<4x8xf32>
  %a9 = tessel.add %a8, %u12 : tensor<4x8xf32>
  %unary = tessel.add %a9, %u13 : tensor<4x8xf32>
  // Binary, compare, select (f32).
  %b0 = tessel.sub %x, %p : tensor<4x8xf32>
  %b1 = tessel.mul %b0, %p : tensor<4x8xf32>
  %b2 = tessel.div %b1, %p : tensor<4x8xf32>
  %b3 = tessel.max %b2, %x : tensor<4x8xf32>
  %b4 = tessel.min %b3, %p : tensor<4x8xf32>
  %b5 = tessel.pow %p, %x : tensor<4x8xf32>
  %c0 = tessel.compare lt, %x, %p : tensor<4x8xf32>
  %c1 = tessel.compare ge, %x, %b4 : tensor<4x8xf32>
  %s0 = tessel.select %c0, %b4, %b5 : tensor<4x8xi1>, tensor<4x8xf32>
  %s1 = tessel.select %c1, %s0, %x : tensor<4x8xi1>, tensor<4x8xf32>
  %c1f = tessel.convert %c1 : (tensor<4x8xi1>) -> tensor<4x8xf32>
  %binary = tessel.add %s1, %c1f : tensor<4x8xf32>
  // bf16: computed in f32, rounded once per op.
  %h0 = tessel.exp %h : tensor<4x8xbf16>
  %h1 = tessel.mul %h0, %h : tensor<4x8xbf16>
  %xb = tessel.convert %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %bf16 = tessel.add %h1, %xb : tensor<4x8xbf16>
  // Integers: division by zero gives 0.
  %i0 = tessel.mul %n, %n : tensor<4x8xi32>
  %i1 = tessel.div %i0, %n : tensor<4x8xi32>
  %i2 = tessel.sub %i1, %n : tensor<4x8xi32>
  %i3 = tessel.abs %n : tensor<4x8xi32>
  %i4 = tessel.max %i2, %i3 : tensor<4x8xi32>
  %xi = tessel.convert %x : (tensor<4x8xf32>) -> tensor<4x8xi32>
  %int = tessel.add %i4, %xi : tensor<4x8xi32>
  // Data movement.
  %m0 = tessel.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %m1 = tessel.broadcast_in_dim %m0, dims = [0, 2] : (tensor<4x8xf32>) -> tensor<4x3x8xf32>
  %m2 = tessel.reshape %m1 : (tensor<4x3x8xf32>) -> tensor<12x8xf32>
  %m3 = tessel.transpose %m2, permutation = [1, 0] : (tensor<12x8xf32>) -> tensor<8x12xf32>
  %m4 = tessel.slice %m3, start = [0, 2], limit = [4, 12], strides = [1, 2] : (tensor<8x12xf32>) -> tensor<4x5xf32>
  %m5 = tessel.concatenate %m4, %m4 dim = 1 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x10xf32>
  %moves = tessel.pad %m5, low = [0, 1], high = [0, 1], value = -2.5 : (tensor<4x10xf32>) -> tensor<4x12xf32>
  // Contractions: plain, batched with a transposed operand, weight-gradient.
  %mm = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %bmm = tessel.dot_general %q, %k, batching = [0] x [0], contracting = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %wgrad = tessel.dot_general %x, %mm, batching = [] x [], contracting = [0] x [0] : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  // Reductions and scans.
  %r0 = tessel.reduce sum %mm, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  %r1 = tessel.reduce max %mm, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  %r2 = tessel.reduce min %mm, dims = [1] : (tensor<4x16xf32>) -> tensor<4xf32>
  %r3 = tessel.add %r0, %r1 : tensor<4xf32>
  %sums = tessel.add %r3, %r2 : tensor<4xf32>
  %mean = tessel.reduce mean %bmm, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<f32>
  %cumsum = tessel.cumsum %x, dim = 1 : tensor<4x8xf32>
  // Normalizations and losses.
  %sm = tessel.softmax %logits, dim = 2 : tensor<2x6x10xf32>
  %ln = tessel.layer_norm %logits, %g, %g, epsilon = 1.0e-05 : tensor<2x6x10xf32>, tensor<10xf32>
  %rms = tessel.rms_norm %logits, %g, epsilon = 1.0e-06 : tensor<2x6x10xf32>, tensor<10xf32>
  %nm0 = tessel.add %sm, %ln : tensor<2x6x10xf32>
  %norms = tessel.add %nm0, %rms : tensor<2x6x10xf32>
  %ce_mean = tessel.softmax_cross_entropy %logits, %labels, ignore_index = -1, reduction = mean : (tensor<2x6x10xf32>, tensor<2x6xi32>) -> tensor<f32>
  %ce_none = tessel.softmax_cross_entropy %logits, %labels, ignore_index = -1, reduction = none : (tensor<2x6x10xf32>, tensor<2x6xi32>) -> tensor<2x6xf32>
  %ce_sum = tessel.softmax_cross_entropy %logits, %labels, ignore_index = 3, reduction = sum : (tensor<2x6x10xf32>, tensor<2x6xi32>) -> tensor<f32>
  // Gathers (out-of-range ids give zeros, are dropped by scatter_add).
  %gathered = tessel.gather %table[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x6xi32>) -> tensor<2x6x8xf32>
  %scattered = tessel.scatter_add %table[%ids], %gathered, axis = 0 : (tensor<10x8xf32>, tensor<2x6xi32>, tensor<2x6x8xf32>) -> tensor<10x8xf32>
  %onehot = tessel.one_hot %ids : (tensor<2x6xi32>) -> tensor<2x6x10xf32>
  %iota = tessel.iota dim = 1 : tensor<4x8xi32>
  return %unary, %binary, %bf16, %int, %moves, %mm, %bmm, %wgrad, %sums, %mean, %norms, %ce_mean, %ce_none, %ce_sum, %gathered, %scattered, %onehot, %iota, %cumsum
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xi32>, tensor<4x12xf32>, tensor<4x16xf32>, tensor<2x4x4xf32>, tensor<8x16xf32>, tensor<4xf32>, tensor<f32>, tensor<2x6x10xf32>, tensor<f32>, tensor<2x6xf32>, tensor<f32>, tensor<2x6x8xf32>, tensor<10x8xf32>, tensor<2x6x10xf32>, tensor<4x8xi32>, tensor<4x8xf32>
}
