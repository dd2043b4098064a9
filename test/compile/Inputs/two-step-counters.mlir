// Two arguments claim the step counter's role: the runtime could not tell
// which one to count, so tessel-compile refuses the program.
func.func @f(%a: tensor<i32> {tessel.name = "a", tessel.runtime_role = "step"},
             %b: tensor<i32> {tessel.name = "b", tessel.runtime_role = "step"})
    -> tensor<i32> {
  return %a : tensor<i32>
}
