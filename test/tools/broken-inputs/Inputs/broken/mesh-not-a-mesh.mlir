func.func @g() { return }
func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.sharding<@g, [{}]>}) { return }
