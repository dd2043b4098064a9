func.func @f(%a: tensor<99999999999999999999xf32>) { return }
