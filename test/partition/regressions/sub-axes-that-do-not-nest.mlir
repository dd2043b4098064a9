// Fuzz finding (bench/fuzz/fuzz.py seed 1, program 22): propagation put "y":(3)2 and
// "y":(1)2 of y=6 on two dimensions of one value (they cut the axis 3 x 2
// and 2 x 3 at once); the reshard planner then recursed without end.
tessel.mesh @mesh ["y"=6]
func.func @f(%a0: tensor<8x1x1xbf16> {tessel.name = "in0", tessel.init = "uniform:0.5:2", tessel.sharding = #tessel.sharding<@mesh, [{?}, {}, {"y":(1)2}]>},
             %a1: tensor<8x1xbf16> {tessel.name = "in1", tessel.init = "int:-3:4", tessel.sharding = #tessel.sharding<@mesh, [{"y", ?}, {}]>},
             %a2: tensor<12x1xbf16> {tessel.name = "in2", tessel.init = "normal:1", tessel.sharding = #tessel.sharding<@mesh, [{"y":(2)3, ?}, {"y":(1)2, ?}]>},
             %a3: tensor<6x1x12xbf16> {tessel.name = "in3", tessel.init = "uniform:0.5:2", tessel.sharding = #tessel.sharding<@mesh, [{}p0, {}, {?}]>},
             %a4: tensor<4x3xi32> {tessel.name = "in4", tessel.init = "int:0:5", tessel.sharding = #tessel.sharding<@mesh, [{}, {?}]>},
             %a5: tensor<12xbf16> {tessel.name = "in5", tessel.init = "int:-3:4", tessel.sharding = #tessel.sharding<@mesh, [{"y"}]>})
    -> (tensor<bf16> {tessel.name = "r0"}, tensor<bf16> {tessel.name = "r1"}) {
  %v1 = tessel.pad %a0, low = [0, 0, 1], high = [0, 0, 3], value = 0.0 : (tensor<8x1x1xbf16>) -> tensor<8x1x5xbf16>
  %v2 = tessel.dot_general %a0, %a0, batching = [] x [], contracting = [0, 1, 2] x [0, 1, 2] : (tensor<8x1x1xbf16>, tensor<8x1x1xbf16>) -> tensor<bf16>
  %v3 = tessel.compare eq, %v1, %v1 : tensor<8x1x5xbf16>
  %v4 = tessel.select %v3, %v1, %v1 {tessel.sharding = #tessel.sharding<@mesh, [{}, {"y":(3)2}p2, {?}]>} : tensor<8x1x5xi1>, tensor<8x1x5xbf16>
  %v5 = tessel.dot_general %a2, %a3, batching = [] x [], contracting = [1, 0] x [1, 2] : (tensor<12x1xbf16>, tensor<6x1x12xbf16>) -> tensor<6xbf16>
  %v6 = tessel.one_hot %a4 : (tensor<4x3xi32>) -> tensor<4x3x5xbf16>
  %v7 = tessel.dot_general %a5, %a5, batching = [] x [], contracting = [] x [] : (tensor<12xbf16>, tensor<12xbf16>) -> tensor<12x12xbf16>
  %v8 = tessel.reduce max %v5, dims = [0] : (tensor<6xbf16>) -> tensor<bf16>
  return %v8, %v8 : tensor<bf16>, tensor<bf16>
}
