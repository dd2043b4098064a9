tessel.mesh @mesh ["dp"=2]
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"tp"}]>}) {
  return
}
