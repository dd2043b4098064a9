// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @rule_operands(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{sharding rule maps 2 operand(s), but the call has 1}}
  %y = tessel.custom_call @k(%x) {rule = #tessel.rule<([i, j], [i, j]) -> ([i, j]) {i=4, j=8}>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rule_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{sharding rule gives result #0 1 dimension(s), but it has rank 2}}
  %y = tessel.custom_call @k(%x) {rule = #tessel.rule<([i, j]) -> ([i]) {i=4, j=8}>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rule_sizes(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{sharding rule does not fit the shapes: result #0 dimension 1 has size 16, but the rule makes it j=8}}
  %y = tessel.custom_call @k(%x) {rule = #tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>} : (tensor<4x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @vjp_missing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{vjp @nowhere is not a function of this module}}
  %y = tessel.custom_call @k(%x) {vjp = @nowhere} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @wrong(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @vjp_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{vjp @wrong has type '(tensor<4xf32>) -> tensor<4xf32>'; expected '(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>'}}
  %y = tessel.custom_call @k(%x) {vjp = @wrong} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
