// Ops whose results have no elements (found by bench/fuzz/fuzz.py): a pad of
// a tensor with a zero-size dimension, a slice whose start is the
// dimension's size, a reshape of an empty tensor and top_k of one. The lowering once
// emitted slice offsets past the end of the empty tensors, and the reshape's
// sharding rule divided by zero.
tessel.mesh @mesh ["x"=2]
func.func @f(%a: tensor<4x0xf32> {tessel.name = "a"},
             %b: tensor<3x6xf32> {tessel.name = "b", tessel.sharding = #tessel.sharding<@mesh, [{}, {"x"}]>},
             %c: tensor<1x0xf32> {tessel.name = "c"}, %e: tensor<0x1xf32> {tessel.name = "e"})
    -> (tensor<5x0xf32> {tessel.name = "r0"}, tensor<0x6xf32> {tessel.name = "r1"},
        tensor<0xf32> {tessel.name = "r2"}, tensor<3x6xf32> {tessel.name = "r3"},
        tensor<0x1xf32> {tessel.name = "r4"}, tensor<0x1xi32> {tessel.name = "r5"}) {
  %p = tessel.pad %a, low = [1, 0], high = [0, 0], value = -2.5 : (tensor<4x0xf32>) -> tensor<5x0xf32>
  %s = tessel.slice %b, start = [3, 0], limit = [3, 6], strides = [1, 1] : (tensor<3x6xf32>) -> tensor<0x6xf32>
  %r = tessel.reshape %c : (tensor<1x0xf32>) -> tensor<0xf32>
  %d = tessel.add %b, %b : tensor<3x6xf32>
  %v, %i = tessel.top_k %e, k = 1 : (tensor<0x1xf32>) -> (tensor<0x1xf32>, tensor<0x1xi32>)
  return %p, %s, %r, %d, %v, %i : tensor<5x0xf32>, tensor<0x6xf32>, tensor<0xf32>, tensor<3x6xf32>, tensor<0x1xf32>, tensor<0x1xi32>
}
