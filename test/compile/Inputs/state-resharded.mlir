// A result named like an argument carries state to the next step (the
// naming convention of hand-written functions), so it must be laid out as
// that argument; here it is not.
tessel.mesh @mesh ["x"=2]
func.func @f(%w: tensor<4x2xf32> {tessel.name = "w", tessel.sharding = #tessel.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<4x2xf32> {tessel.name = "w", tessel.sharding = #tessel.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = tessel.neg %w : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
