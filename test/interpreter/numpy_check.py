#!/usr/bin/env python3
"""Checks tessel-interp's op semantics against independent numpy references.

Each case is a module with one `func.func @f`, its inputs and a numpy
reference (the cases are in numpy_cases_math.py and numpy_cases_nn.py,
the helpers in numpy_check_lib.py). The inputs go to a safetensors file, tessel-interp runs @f, and
its outputs are compared with the reference: integers and booleans exactly,
floats within a per-case tolerance (the interpreter computes in double and
rounds once per op, so most f32 results match float64 numpy cast to f32 to
within an ulp or so; f64 results to about 1e-12).

Usage: numpy_check.py --tool PATH/tessel-interp --out SCRATCH_DIR
Prints "ok NAME" or "FAIL NAME: ..." per case, then "N passed, M failed".
"""

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from safetensors_io import (ST_OF, BF16, read_safetensors,  # noqa: E402
                            write_safetensors)
from numpy_check_lib import CASES, DEFAULT_TOL  # noqa: E402
import numpy_cases_math  # noqa: E402,F401  (registers its cases)
import numpy_cases_nn  # noqa: E402,F401

# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def expected_dtype(e):
    if isinstance(e, BF16):
        return "BF16", e.values
    e = np.asarray(e)
    return ST_OF[e.dtype], e


def compare(got_dt, got, exp, tol):
    """Returns None if equal enough, else a message."""
    exp_dt, exp = expected_dtype(exp)
    if got_dt != exp_dt:
        return "dtype %s, expected %s" % (got_dt, exp_dt)
    if tuple(got.shape) != tuple(exp.shape):
        return "shape %s, expected %s" % (list(got.shape), list(exp.shape))
    if got_dt in ("I32", "I64", "BOOL"):
        bad = got != exp
        if not bad.any():
            return None
        i = np.argwhere(bad)[0]
        err = np.abs(got.astype(np.float64) - exp.astype(np.float64)).max()
        return "max error %g (%d wrong; at %s got %s expected %s)" % (
            err, bad.sum(), list(i), got[tuple(i)], exp[tuple(i)])
    rtol, atol = tol.get(got_dt, DEFAULT_TOL[got_dt])
    g, e = got.astype(np.float64), exp.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(e)
    same = (g == e) | both_nan
    with np.errstate(invalid="ignore"):
        err = np.where(same, 0.0, np.abs(g - e))
        bad = ~same & ~(err <= atol + rtol * np.abs(e))
    if not bad.any():
        return None
    i = tuple(np.argwhere(bad)[0])
    return "max error %g (%d wrong; at %s got %r expected %r)" % (
        np.nanmax(np.where(np.isnan(err), np.inf, err)), bad.sum(),
        list(i), float(g[i]), float(e[i]))


def run_case(tool, out_dir, c):
    d = os.path.join(out_dir, c["name"])
    os.makedirs(d, exist_ok=True)
    mlir = os.path.join(d, "f.mlir")
    with open(mlir, "w") as f:
        f.write(c["mlir"])
    cmd = [tool, mlir, "--func", "f"]
    if c["inputs"]:
        inp = os.path.join(d, "in.safetensors")
        write_safetensors(inp, {"arg%d" % i: v
                                for i, v in enumerate(c["inputs"])})
        cmd += ["--inputs", inp]
    outp = os.path.join(d, "out.safetensors")
    cmd += ["--save", outp]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=60)
    if p.returncode != 0:
        return "tessel-interp exited %d: %s" % (
            p.returncode, " | ".join(p.stdout.strip().splitlines()[:3]))
    outs = read_safetensors(outp)
    args = [v.values if isinstance(v, BF16) else np.asarray(v)
            for v in c["inputs"]]
    exp = c["ref"](*args)
    if not isinstance(exp, list):
        exp = [exp]
    if len(outs) != len(exp):
        return "%d outputs, expected %d" % (len(outs), len(exp))
    for k, e in enumerate(exp):
        name = "result%d" % k
        if name not in outs:
            return "no output %s" % name
        msg = compare(outs[name][0], outs[name][1], e, c["tol"])
        if msg:
            return "%s: %s" % (name, msg)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True, help="path of tessel-interp")
    ap.add_argument("--out", required=True, help="scratch directory")
    ap.add_argument("--filter", default="", help="run only cases whose "
                    "name contains this")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    passed = failed = 0
    for c in CASES:
        if a.filter not in c["name"]:
            continue
        try:
            msg = run_case(a.tool, a.out, c)
        except Exception as e:  # report, don't stop the other cases
            msg = "%s: %s" % (type(e).__name__, e)
        if msg is None:
            passed += 1
            print("ok %s" % c["name"])
        else:
            failed += 1
            print("FAIL %s: %s" % (c["name"], msg))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

