#!/usr/bin/env python3
"""Finite-difference checks of every op's VJP rule, in f64 (or, with
--model, of a whole tessel-models model's gradient, by parameter group).

For each op, loss(x...) = sum(op(x...) * w) with a fixed random w. The
gradient from --tessel-grad (run in tessel-interp) is compared with central
differences along random directions:  <grad, v>  vs
(loss(x + eps v) - loss(x - eps v)) / (2 eps), eps = 1e-6 (per-case, larger for f32 round trips), over 3
directions; relative error must stay below 1e-6.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from safetensors_io import read_arrays as read_st  # noqa: E402
from safetensors_io import write_safetensors as write_st  # noqa: E402


def run_interp(interp, module_path, func, tensors, base):
    """Runs @func of module_path on `tensors` (written to base.in) and
    returns its outputs (read from base.out); raises RuntimeError."""
    write_st(base + ".in", tensors)
    r = subprocess.run([interp, module_path, "--func", func, "--inputs",
                        base + ".in", "--save", base + ".out"],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-800:])
    return read_st(base + ".out")


def t(shape, et="f64"):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), et)


rng = np.random.default_rng(0)
CASES = []


def case(name, args, body, out_shape, eps=1e-6, tol=1e-6):
    """args: list of (name, array); body: lines producing %out. `eps` is the
    finite-difference step and `tol` the accepted relative error; cases that
    round through f32 need a larger step so f32 rounding does not dominate."""
    CASES.append((name, args, body, out_shape, eps, tol))


def f(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


X = f(3, 4)
for op in ["neg", "abs", "relu", "exp", "tanh", "logistic", "silu", "sin",
           "cos"]:
    case(op, [("x", X)], ["%%out = tessel.%s %%x : %s" % (op, t((3, 4)))],
         (3, 4))
P = f(3, 4, lo=0.5, hi=2.0)
for op in ["log", "sqrt", "rsqrt"]:
    case(op, [("x", P)], ["%%out = tessel.%s %%x : %s" % (op, t((3, 4)))],
         (3, 4))
for form in ["tanh", "erf"]:
    case("gelu_" + form, [("x", f(3, 4, lo=-3, hi=3))],
         ["%%out = tessel.gelu %%x approximation = %s : %s" % (form,
                                                              t((3, 4)))],
         (3, 4))
Y = f(3, 4)
for op in ["add", "sub", "mul", "max", "min"]:
    case(op, [("x", X), ("y", Y)],
         ["%%out = tessel.%s %%x, %%y : %s" % (op, t((3, 4)))], (3, 4))
case("div", [("x", X), ("y", P)],
     ["%%out = tessel.div %%x, %%y : %s" % t((3, 4))], (3, 4))
case("pow", [("x", P), ("y", f(3, 4, lo=-2, hi=2))],
     ["%%out = tessel.pow %%x, %%y : %s" % t((3, 4))], (3, 4))
case("compare_select", [("x", X), ("y", Y)],
     ["%%p = tessel.compare lt, %%x, %%y : %s" % t((3, 4)),
      "%%out = tessel.select %%p, %%x, %%y : %s, %s" % (t((3, 4), "i1"),
                                                        t((3, 4)))], (3, 4))
case("convert", [("x", X)],
     ["%%c = tessel.convert %%x : (%s) -> %s" % (t((3, 4)), t((3, 4), "f32")),
      "%%out = tessel.convert %%c : (%s) -> %s" % (t((3, 4), "f32"),
                                                   t((3, 4)))], (3, 4),
     eps=1e-2, tol=1e-4)
case("broadcast_in_dim", [("x", f(3, 1))],
     ["%%out = tessel.broadcast_in_dim %%x, dims = [0, 2] : (%s) -> %s" % (
         t((3, 1)), t((3, 5, 4)))], (3, 5, 4))
case("reshape", [("x", X)],
     ["%%out = tessel.reshape %%x : (%s) -> %s" % (t((3, 4)), t((2, 6)))],
     (2, 6))
case("transpose", [("x", f(2, 3, 4))],
     ["%%out = tessel.transpose %%x, permutation = [2, 0, 1] : (%s) -> %s" % (
         t((2, 3, 4)), t((4, 2, 3)))], (4, 2, 3))
case("slice", [("x", f(4, 5))],
     ["%%out = tessel.slice %%x, start = [1, 0], limit = [3, 4], strides = "
      "[1, 1] : (%s) -> %s" % (t((4, 5)), t((2, 4)))], (2, 4))
case("concatenate", [("x", X), ("y", f(3, 2))],
     ["%%out = tessel.concatenate %%x, %%y dim = 1 : (%s, %s) -> %s" % (
         t((3, 4)), t((3, 2)), t((3, 6)))], (3, 6))
case("pad", [("x", X)],
     ["%%out = tessel.pad %%x, low = [1, 0], high = [0, 2], value = 0.5 : "
      "(%s) -> %s" % (t((3, 4)), t((4, 6)))], (4, 6))
case("matmul", [("x", X), ("w2", f(4, 5))],
     ["%%out = tessel.dot_general %%x, %%w2, batching = [] x [], contracting "
      "= [1] x [0] : (%s, %s) -> %s" % (t((3, 4)), t((4, 5)), t((3, 5)))],
     (3, 5))
case("dot_batched_attention", [("q", f(2, 3, 4, 5)), ("k", f(2, 3, 6, 5))],
     ["%%out = tessel.dot_general %%q, %%k, batching = [0, 1] x [0, 1], "
      "contracting = [3] x [3] : (%s, %s) -> %s" % (
          t((2, 3, 4, 5)), t((2, 3, 6, 5)), t((2, 3, 4, 6)))], (2, 3, 4, 6))
case("dot_transposed_operands", [("a", f(4, 3)), ("b", f(5, 2, 4))],
     ["%%out = tessel.dot_general %%a, %%b, batching = [] x [], contracting "
      "= [0] x [2] : (%s, %s) -> %s" % (t((4, 3)), t((5, 2, 4)),
                                        t((3, 5, 2)))], (3, 5, 2))
case("dot_batch_not_leading", [("a", f(4, 2, 3)), ("b", f(3, 2, 5))],
     ["%%out = tessel.dot_general %%a, %%b, batching = [1] x [1], contracting"
      " = [2] x [0] : (%s, %s) -> %s" % (t((4, 2, 3)), t((3, 2, 5)),
                                         t((2, 4, 5)))], (2, 4, 5))
for kind, dims, out in [("sum", "1", (3,)), ("mean", "0, 1", ()),
                        ("max", "1", (3,)), ("min", "0", (4,))]:
    case("reduce_" + kind, [("x", X)],
         ["%%out = tessel.reduce %s %%x, dims = [%s] : (%s) -> %s" % (
             kind, dims, t((3, 4)), t(out))], out)
case("cumsum", [("x", X)],
     ["%%out = tessel.cumsum %%x, dim = 1 : %s" % t((3, 4))], (3, 4))
case("softmax", [("x", f(2, 3, 4))],
     ["%%out = tessel.softmax %%x, dim = 1 : %s" % t((2, 3, 4))], (2, 3, 4))
case("layer_norm", [("x", f(2, 3, 5)), ("g", f(5)), ("b", f(5))],
     ["%%out = tessel.layer_norm %%x, %%g, %%b, epsilon = 1.0e-05 : %s, %s" %
      (t((2, 3, 5)), t((5,)))], (2, 3, 5))
case("rms_norm", [("x", f(2, 3, 5)), ("g", f(5))],
     ["%%out = tessel.rms_norm %%x, %%g, epsilon = 1.0e-05 : %s, %s" % (
         t((2, 3, 5)), t((5,)))], (2, 3, 5))
case("gather", [("table", f(6, 3)), ("idx", np.array([5, 0, 5, 2],
                                                      dtype=np.int32))],
     ["%%out = tessel.gather %%table[%%idx], axis = 0 : (%s, %s) -> %s" % (
         t((6, 3)), t((4,), "i32"), t((4, 3)))], (4, 3))
case("scatter_add", [("base", f(6, 3)), ("idx", np.array([5, 0, 5, 2],
                                                          dtype=np.int32)),
                     ("upd", f(4, 3))],
     ["%%out = tessel.scatter_add %%base[%%idx], %%upd, axis = 0 : (%s, %s, "
      "%s) -> %s" % (t((6, 3)), t((4,), "i32"), t((4, 3)), t((6, 3)))],
     (6, 3))
case("top_k", [("x", f(3, 6))],
     ["%%v, %%i = tessel.top_k %%x, k = 2 : (%s) -> (%s, %s)" % (
         t((3, 6)), t((3, 2)), t((3, 2), "i32")),
      "%%out = tessel.add %%v, %%v : %s" % t((3, 2))], (3, 2))
LAB = np.array([[1, 4], [-100, 0]], dtype=np.int32)
for red, out in [("mean", ()), ("sum", ()), ("none", (2, 2))]:
    case("cross_entropy_" + red, [("logits", f(2, 2, 5)), ("labels", LAB)],
         ["%%out = tessel.softmax_cross_entropy %%logits, %%labels, "
          "ignore_index = -100, reduction = %s : (%s, %s) -> %s" % (
              red, t((2, 2, 5)), t((2, 2), "i32"), t(out))], out)
case("chain_mlp", [("x", f(4, 3)), ("w1", f(3, 5)), ("w2", f(5, 2))],
     ["%%h = tessel.dot_general %%x, %%w1, batching = [] x [], contracting = "
      "[1] x [0] : (%s, %s) -> %s" % (t((4, 3)), t((3, 5)), t((4, 5))),
      "%%a = tessel.gelu %%h approximation = tanh : %s" % t((4, 5)),
      "%%out = tessel.dot_general %%a, %%w2, batching = [] x [], contracting "
      "= [1] x [0] : (%s, %s) -> %s" % (t((4, 5)), t((5, 2)), t((4, 2)))],
     (4, 2))


def module(args, body, out_shape):
    wshape = out_shape
    sig = ", ".join("%%%s: %s {tessel.name = \"%s\"}" % (
        n, t(a.shape, "i32" if a.dtype == np.int32 else "f64"), n)
        for n, a in args)
    sig += ", %%w: %s {tessel.name = \"w\"}" % t(wshape)
    lines = ["  " + l for l in body]
    lines.append("  %%l = tessel.mul %%out, %%w : %s" % t(out_shape))
    if out_shape:
        dims = ", ".join(str(d) for d in range(len(out_shape)))
        lines.append("  %%loss = tessel.reduce sum %%l, dims = [%s] : (%s) -> "
                     "%s" % (dims, t(out_shape), t(())))
    else:
        lines.append("  %%loss = tessel.add %%l, %%l : %s" % t(()))
    return ("func.func @forward(%s) -> %s {\n%s\n  return %%loss : %s\n}\n" % (
        sig, t(()), "\n".join(lines), t(())))


def model_error(o, base, inputs, grads, names, eps):
    """The worst relative error of central differences (step eps) along 3
    random directions in the parameters `names`."""
    interp = os.path.join(o.bin, "tessel-interp")
    worst = 0.0
    for k in range(3):
        v = {n: rng.standard_normal(inputs[n].shape) for n in names}
        plus, minus = dict(inputs), dict(inputs)
        for n in names:
            plus[n] = inputs[n] + eps * v[n]
            minus[n] = inputs[n] - eps * v[n]
        lp = float(run_interp(interp, base + ".grad.mlir", "forward", plus,
                              base + ".p")["loss"])
        lm = float(run_interp(interp, base + ".grad.mlir", "forward", minus,
                              base + ".m")["loss"])
        numeric = (lp - lm) / (2 * eps)
        analytic = sum(float(np.sum(grads["grad." + n] * v[n]))
                       for n in names)
        worst = max(worst, abs(numeric - analytic) /
                    max(1e-8, abs(numeric), abs(analytic)))
    return worst


def check_model(o, groups):
    """Central differences of a whole tessel-models model (in f64) along
    random directions in the parameters whose names match each group's
    regular expression; returns (passed, failed)."""
    opt = os.path.join(o.bin, "tessel-opt")
    interp = os.path.join(o.bin, "tessel-interp")
    base = os.path.join(o.out, "model")
    steps = [[os.path.join(o.bin, "tessel-models")] + o.model.split() +
             ["--dtype", "f64", "-o", base + ".mlir"],
             [opt, base + ".mlir", "--tessel-grad", "-o", base + ".grad.mlir"],
             [interp, base + ".grad.mlir", "--func", "forward", "--seed", "1",
              "--save-inputs", base + ".in"]]
    for cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print("FAIL model: %s" % r.stderr.strip()[:500])
            return 0, 1
    inputs = read_st(base + ".in")
    grads = run_interp(interp, base + ".grad.mlir", "forward_grad", inputs,
                       base + ".g")
    passed = failed = 0
    for label, pattern in groups:
        names = [n for n in inputs if "grad." + n in grads and
                 re.search(pattern, n)]
        if not names:
            print("FAIL %s: no parameter matches %s" % (label, pattern))
            failed += 1
            continue
        # Routing is piecewise constant in the parameters: eps must be small
        # enough not to flip a top-k choice or a capacity slot (1e-4 does on
        # the test model), and large enough that a small gradient (the
        # router's) stands above the loss's rounding (1e-7 does not). Of
        # 1e-6 and 1e-5, the step with the smaller error counts.
        # The bound is 1e-5, not the ops' 1e-6: a whole model's loss carries
        # more rounding, and a group's directional derivative can be 1e-3
        # of it (a wrong rule is off by 1e-2 or more).
        worst = min(model_error(o, base, inputs, grads, names, eps)
                    for eps in (1e-6, 1e-5))
        ok = worst < 1e-5
        print("%s %s (%d tensors): max relative error %.2e" % (
            "ok" if ok else "FAIL", label, len(names), worst))
        passed += ok
        failed += not ok
    return passed, failed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model", default="",
                   help="tessel-models arguments: check that model's "
                        "gradient instead of the ops'")
    p.add_argument("--group", action="append", default=[],
                   help="with --model: LABEL=REGEX, parameters to perturb "
                        "together (default: all)")
    o = p.parse_args()
    os.makedirs(o.out, exist_ok=True)
    if o.model:
        groups = [g.split("=", 1) for g in o.group] or [("all", ".")]
        passed, failed = check_model(o, groups)
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    opt = os.path.join(o.bin, "tessel-opt")
    interp = os.path.join(o.bin, "tessel-interp")
    passed = failed = 0
    for name, args, body, out_shape, eps, tol in CASES:
        base = os.path.join(o.out, name)
        w = rng.uniform(-1, 1, size=out_shape)
        inputs = dict(args)
        inputs["w"] = w
        with open(base + ".mlir", "w") as fh:
            fh.write(module(args, body, out_shape))
        r = subprocess.run([opt, base + ".mlir", "--tessel-grad", "-o",
                            base + ".grad.mlir"], capture_output=True,
                           text=True)
        if r.returncode:
            print("FAIL %s: %s" % (name, r.stderr.strip()[:500]))
            failed += 1
            continue

        def run(func, tensors, tag):
            return run_interp(interp, base + ".grad.mlir", func, tensors,
                              base + tag)

        try:
            grads = run("forward_grad", inputs, "g")
            floats = [n for n, a in inputs.items() if a.dtype == np.float64]
            worst = 0.0
            for k in range(3):
                v = {n: rng.standard_normal(inputs[n].shape) for n in floats}
                plus = dict(inputs)
                minus = dict(inputs)
                for n in floats:
                    plus[n] = inputs[n] + eps * v[n]
                    minus[n] = inputs[n] - eps * v[n]
                lp = float(run("forward", plus, "p%d" % k)["result0"])
                lm = float(run("forward", minus, "m%d" % k)["result0"])
                numeric = (lp - lm) / (2 * eps)
                analytic = sum(float(np.sum(grads["grad." + n] * v[n]))
                               for n in floats)
                err = abs(numeric - analytic) / max(1e-8, abs(numeric),
                                                    abs(analytic))
                worst = max(worst, err)
            if worst < tol:
                print("ok %s: max relative error %.2e" % (name, worst))
                passed += 1
            else:
                print("FAIL %s: relative error %.2e" % (name, worst))
                failed += 1
        except RuntimeError as e:
            print("FAIL %s: %s" % (name, str(e)[:500]))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
