// A minimum over 4 columns split 6 ways (padded): the padding must be
// the identity of min (the largest i32), not 0 (seed 306, program 7280).
tessel.mesh @mesh ["dp"=2, "x"=3, "y"=1]
func.func @f(%a3: tensor<3x4xi32> {tessel.name = "in3", tessel.init = "int:1:3", tessel.sharding = #tessel.sharding<@mesh, [{}, {"x", "y", "dp"}p2]>})
    -> (tensor<i32> {tessel.name = "r0"}) {
  %v9 = tessel.reduce sum %a3, dims = [0] : (tensor<3x4xi32>) -> tensor<4xi32>
  %v11 = tessel.reduce min %v9, dims = [0] : (tensor<4xi32>) -> tensor<i32>
  return %v11 : tensor<i32>
}
