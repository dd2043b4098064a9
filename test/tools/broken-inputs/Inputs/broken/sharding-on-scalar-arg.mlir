tessel.mesh @m ["x"=2]
func.func @f(%a: f32 {tessel.sharding = #tessel.sharding<@m, []>}) { return }
