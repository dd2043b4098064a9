func.func @f(%a: tensor<4xf32> {tessel.sharding = #tessel.frob<1>}) { return }
