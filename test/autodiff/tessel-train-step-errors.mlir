// RUN: tessel-opt %s --tessel-train-step="optimizer=lion" -verify-diagnostics
// RUN: not tessel-opt %s --tessel-train-step="lr=-1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not tessel-opt %s --tessel-train-step="batch=w" 2>&1 | FileCheck %s --check-prefix=NOPARAM
// RUN: not tessel-opt %s --tessel-train-step="func=loss" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// LR: error: train step options out of range: lr must be > 0
// NOPARAM: error: has no parameters to train; hint: parameters are the float arguments without a "batch" logical axis
// NOFUNC: error: no function @loss to build a train step from; hint: name the loss function with func=

// expected-error @below {{unknown optimizer 'lion'; expected adamw or sgd}}
func.func @forward(%w: tensor<4xf32> {tessel.name = "w"}) -> tensor<f32> {
  %l = tessel.reduce sum %w, dims = [0] : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
