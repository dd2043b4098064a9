#!/usr/bin/env python3
"""Checks --tessel-train-step's optimizer against an independent numpy one.

A 2-layer f64 MLP with a mean cross-entropy loss. For each configuration the
script runs @train_step for several steps in tessel-interp, feeding its new
parameters and optimizer state back, and at every step recomputes the update
in numpy from @forward_grad's gradients (themselves checked by finite
differences in grad_check.py): global gradient norm, clipping, the
warm-up + cosine learning-rate schedule, SGD with momentum or AdamW with
bias correction and decoupled weight decay on matrices only. Parameters,
state, loss and norm must agree to 1e-10 relative.
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_check import run_interp  # noqa: E402

MODEL = """\
func.func @forward(
    %w0: tensor<6x8xf64> {tessel.name = "w0", tessel.logical_axes = ["embed", "mlp"]},
    %b0: tensor<8xf64> {tessel.name = "b0", tessel.logical_axes = ["mlp"]},
    %w1: tensor<8x5xf64> {tessel.name = "w1", tessel.logical_axes = ["mlp", "classes"]},
    %b1: tensor<5xf64> {tessel.name = "b1", tessel.logical_axes = ["classes"]},
    %x: tensor<4x6xf64> {tessel.name = "x", tessel.logical_axes = ["batch", "embed"]},
    %labels: tensor<4xi32> {tessel.name = "labels"}) -> tensor<f64> {
  %h = tessel.dot_general %x, %w0, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x6xf64>, tensor<6x8xf64>) -> tensor<4x8xf64>
  %bb0 = tessel.broadcast_in_dim %b0, dims = [1] : (tensor<8xf64>) -> tensor<4x8xf64>
  %h1 = tessel.add %h, %bb0 : tensor<4x8xf64>
  %a = tessel.tanh %h1 : tensor<4x8xf64>
  %o = tessel.dot_general %a, %w1, batching = [] x [], contracting = [1] x [0]
      : (tensor<4x8xf64>, tensor<8x5xf64>) -> tensor<4x5xf64>
  %bb1 = tessel.broadcast_in_dim %b1, dims = [1] : (tensor<5xf64>) -> tensor<4x5xf64>
  %o1 = tessel.add %o, %bb1 : tensor<4x5xf64>
  %l = tessel.softmax_cross_entropy %o1, %labels, ignore_index = -100,
      reduction = mean : (tensor<4x5xf64>, tensor<4xi32>) -> tensor<f64>
  return %l : tensor<f64>
}
"""
PARAMS = ["w0", "b0", "w1", "b1"]

CONFIGS = [
    ("adamw warmup+cosine clip wd", "adamw", dict(
        lr=0.05, warmup=2, total_steps=6, min_lr_ratio=0.1, beta1=0.9,
        beta2=0.99, epsilon=1e-8, weight_decay=0.1, clip_norm=0.5)),
    ("adamw constant", "adamw", dict(
        lr=0.01, warmup=0, total_steps=0, min_lr_ratio=0.1, beta1=0.8,
        beta2=0.95, epsilon=1e-6, weight_decay=0.0, clip_norm=0.0)),
    ("sgd momentum cosine wd", "sgd", dict(
        lr=0.5, warmup=0, total_steps=5, min_lr_ratio=0.0, momentum=0.9,
        weight_decay=0.01, clip_norm=0.0)),
    ("sgd clip warmup", "sgd", dict(
        lr=0.5, warmup=3, total_steps=0, min_lr_ratio=0.1, momentum=0.5,
        weight_decay=0.0, clip_norm=0.1)),
]
STEPS = 7


def lr_at(c, t):
    lr = c["lr"]
    if c["warmup"] > 0:
        lr *= min(1.0, t / c["warmup"])
    if c["total_steps"] > c["warmup"]:
        p = (t - c["warmup"]) / (c["total_steps"] - c["warmup"])
        p = max(0.0, min(1.0, p))
        lr *= c["min_lr_ratio"] + (1 - c["min_lr_ratio"]) * 0.5 * (
            1 + math.cos(math.pi * p))
    return lr


def numpy_step(opt, c, params, state, grads, step):
    norm = math.sqrt(sum(float(np.sum(grads[p] ** 2)) for p in PARAMS))
    scale = 1.0
    if c["clip_norm"] > 0:
        scale = min(1.0, c["clip_norm"] / (norm + 1e-6))
    t = step + 1
    lr = lr_at(c, t)
    new_p, new_s = {}, {}
    for p in PARAMS:
        g = grads[p] * scale
        w = params[p]
        if opt == "adamw":
            m = c["beta1"] * state["adamw.m." + p] + (1 - c["beta1"]) * g
            v = c["beta2"] * state["adamw.v." + p] + (1 - c["beta2"]) * g * g
            new_s["adamw.m." + p], new_s["adamw.v." + p] = m, v
            mhat = m / (1 - c["beta1"] ** t)
            vhat = v / (1 - c["beta2"] ** t)
            upd = lr * mhat / (np.sqrt(vhat) + c["epsilon"])
        else:
            mom = c["momentum"] * state["sgd.mom." + p] + g
            new_s["sgd.mom." + p] = mom
            upd = lr * mom
        if c["weight_decay"] > 0 and w.ndim >= 2:
            upd = upd + lr * c["weight_decay"] * w
        new_p[p] = w - upd
    return new_p, new_s, norm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(a.out, "mlp.mlir")
    with open(src, "w") as f:
        f.write(MODEL)
    rng = np.random.default_rng(3)
    data = {"x": rng.standard_normal((4, 6)),
            "labels": np.array([0, 3, 4, 1], dtype=np.int32)}
    passed = failed = 0

    def interp(module, func, inputs, tag):
        return run_interp(os.path.join(a.bin, "tessel-interp"), module, func,
                          inputs, os.path.join(a.out, tag))

    for label, opt, c in CONFIGS:
        flags = ("optimizer=%s lr=%r warmup=%d total-steps=%d "
                 "min-lr-ratio=%r weight-decay=%r clip-norm=%r" % (
                     opt, c["lr"], c["warmup"], c["total_steps"],
                     c["min_lr_ratio"], c["weight_decay"], c["clip_norm"]))
        if opt == "adamw":
            flags += " beta1=%r beta2=%r epsilon=%r" % (
                c["beta1"], c["beta2"], c["epsilon"])
        else:
            flags += " momentum=%r" % c["momentum"]
        module = os.path.join(a.out, "%s.mlir" % opt + str(passed + failed))
        r = subprocess.run([os.path.join(a.bin, "tessel-opt"), src,
                            "--tessel-grad=func=forward",
                            "--tessel-train-step=" + flags, "-o", module],
                           capture_output=True, text=True)
        if r.returncode:
            print("FAIL %s: %s" % (label, r.stderr[-800:]))
            failed += 1
            continue
        prng = np.random.default_rng(7)
        params = {p: prng.standard_normal(s) * 0.5 for p, s in
                  [("w0", (6, 8)), ("b0", (8,)), ("w1", (8, 5)),
                   ("b1", (5,))]}
        slots = ["m", "v"] if opt == "adamw" else ["mom"]
        state = {"%s.%s.%s" % (opt, s, p): np.zeros_like(params[p])
                 for s in slots for p in PARAMS}
        worst = 0.0
        try:
            losses = []
            for step in range(STEPS):
                g = interp(module, "forward_grad", {**params, **data},
                           "g%d" % step)
                grads = {p: g["grad." + p] for p in PARAMS}
                exp_p, exp_s, exp_norm = numpy_step(opt, c, params, state,
                                                    grads, step)
                out = interp(module, "train_step",
                             {**params, **state, **data,
                              "step": np.array(step, dtype=np.int32)},
                             "s%d" % step)
                checks = [(out[k], v) for k, v in exp_p.items()]
                checks += [(out[k], v) for k, v in exp_s.items()]
                checks.append((out["grad_norm"], np.array(exp_norm)))
                checks.append((out["loss"], g["loss"]))
                for got, want in checks:
                    err = float(np.max(np.abs(got - want) /
                                       (np.abs(want) + 1e-12)))
                    worst = max(worst, err)
                losses.append(float(out["loss"]))
                params = {p: out[p] for p in PARAMS}
                state = {k: out[k] for k in state}
            if worst < 1e-10:
                print("ok %s: %d steps, loss %.4f -> %.4f, max relative "
                      "error %.1e" % (label, STEPS, losses[0], losses[-1],
                                      worst))
                passed += 1
            else:
                print("FAIL %s: relative error %.2e" % (label, worst))
                failed += 1
        except RuntimeError as e:
            print("FAIL %s: %s" % (label, e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
