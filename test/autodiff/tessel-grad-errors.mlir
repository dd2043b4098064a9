// RUN: tessel-opt %s --split-input-file --tessel-grad=func=f -verify-diagnostics

// expected-error @below {{result #0 must be a scalar float loss to differentiate, got 'tensor<4xf32>'; hint: reduce the loss to a scalar}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<8xf32>) -> tensor<f32> {
  // expected-error @below {{no VJP rule for 'tessel.slice' with strides other than 1}}
  %s = tessel.slice %x, start = [0], limit = [8], strides = [2]
      : (tensor<8xf32>) -> tensor<4xf32>
  %l = tessel.reduce sum %s, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Collectives have no VJP rule: differentiate before partitioning.
tessel.mesh @mesh ["dp"=2]
func.func @f(%x: tensor<8xf32>) -> tensor<f32> {
  // expected-error @below {{no VJP rule for 'tessel.all_reduce'; hint: differentiate the program before partitioning it}}
  %s = tessel.all_reduce sum %x on @mesh ["dp"] : tensor<8xf32>
  %l = tessel.reduce sum %s, dims = [0] : (tensor<8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
