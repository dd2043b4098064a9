tessel.mesh @mesh ["pp"=2]

func.func @forward(%x: tensor<4x8xf32> {tessel.name = "x"}) {
  tessel.send %x on @mesh ["pp"], target = 1, channel = 0 : tensor<4x8xf32>
  return
}
