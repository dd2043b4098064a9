tessel.mesh @mesh ["x"=2]
func.func @f(%x: tensor<3xf32> {tessel.name = "x", tessel.init = "normal:1"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %b = tessel.broadcast_in_dim %x, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>
  %c = tessel.sharding_constraint %b <@mesh, [{}, {"x"}]> : tensor<3x2xf32>
  %m = tessel.reduce max %c, dims = [1] : (tensor<3x2xf32>) -> tensor<3xf32>
  %l = tessel.reduce sum %m, dims = [0] : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @g(%x: tensor<3xf32> {tessel.name = "x", tessel.init = "normal:1"}) -> (tensor<f32> {tessel.name = "loss"}) {
  %b = tessel.broadcast_in_dim %x, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>
  %m = tessel.reduce min %b, dims = [1] : (tensor<3x2xf32>) -> tensor<3xf32>
  %l = tessel.reduce sum %m, dims = [0] : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
