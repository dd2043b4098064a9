tessel.mesh ["x"=2]
