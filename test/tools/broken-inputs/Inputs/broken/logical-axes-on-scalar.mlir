func.func @f(%a: f32 {tessel.logical_axes = []}) { return }
