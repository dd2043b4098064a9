tessel.mesh @mesh ["a"=4]
func.func @f(%x: tensor<8xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"a"}]>},
             %w: tensor<1024x16xf32> {tessel.sharding = #tessel.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x16xf32> {
  %e = tessel.exp %x : tensor<8xf32>
  %b = tessel.broadcast_in_dim %e, dims = [0] : (tensor<8xf32>) -> tensor<8x1024xf32>
  %c = tessel.dot_general %b, %w, batching = [] x [], contracting = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x16xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}
