tessel.mesh @mesh ["dp"=4, "x"=2, "z"=1]
func.func @f(%a: tensor<4x4xi32> {tessel.name = "pos", tessel.init = "int:1:9", tessel.sharding = #tessel.sharding<@mesh, [{}, {"z", "dp", "x"}]>},
             %b: tensor<3x5xi32> {tessel.name = "neg", tessel.init = "int:-9:-1", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}, {"x"}]>},
             %c: tensor<6xi64> {tessel.name = "wide", tessel.init = "int:1:9", tessel.sharding = #tessel.sharding<@mesh, [{"dp"}]>})
    -> (tensor<i32> {tessel.name = "min"}, tensor<i32> {tessel.name = "max"}, tensor<i64> {tessel.name = "min64"}) {
  %min = tessel.reduce min %a, dims = [0, 1] : (tensor<4x4xi32>) -> tensor<i32>
  %max = tessel.reduce max %b, dims = [0, 1] : (tensor<3x5xi32>) -> tensor<i32>
  %min64 = tessel.reduce min %c, dims = [0] : (tensor<6xi64>) -> tensor<i64>
  return %min, %max, %min64 : tensor<i32>, tensor<i32>, tensor<i64>
}
