#!/usr/bin/env python3
"""Helpers for numpy_check.py's cases: the case registry, input generators
and numpy references shared by numpy_cases_math.py and numpy_cases_nn.py.
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from safetensors_io import ST_OF, BF16  # noqa: E402

# --------------------------------------------------------------------------
# Helpers for building cases
# --------------------------------------------------------------------------

rng = np.random.default_rng(20240601)
CASES = []

DEFAULT_TOL = {"F32": (1e-6, 1e-6), "F64": (1e-12, 1e-12),
               "F16": (1e-3, 1e-3), "BF16": (0.0, 0.0)}

MLIR_ET = {"F32": "f32", "F64": "f64", "F16": "f16", "BF16": "bf16",
           "I32": "i32", "I64": "i64", "BOOL": "i1"}


def T(shape, et="f32"):
    """tensor<...> type text."""
    dims = "".join("%dx" % d for d in shape)
    return "tensor<%s%s>" % (dims, et)


def et_of(v):
    if isinstance(v, BF16):
        return "bf16"
    return MLIR_ET[ST_OF[np.asarray(v).dtype]]


def shape_of(v):
    return (v.values if isinstance(v, BF16) else np.asarray(v)).shape


def case(name, inputs, body, results, ref, tol=None):
    """Adds a case.

    inputs: list of arrays (or BF16); arguments are %a0, %a1, ...
    body: MLIR op lines using %a<i>.
    results: list of (value, type text).
    ref: function of the float64/int inputs returning the expected outputs
    (an array with the expected dtype, or BF16(...)).
    """
    args = ", ".join("%%a%d: %s" % (i, T(shape_of(v), et_of(v)))
                     for i, v in enumerate(inputs))
    rtypes = ", ".join(t for _, t in results)
    lines = ["func.func @f(%s) -> (%s) {" % (args, rtypes)]
    lines += ["  " + l for l in body]
    lines.append("  return %s : %s" % (", ".join(v for v, _ in results),
                                      rtypes))
    lines.append("}")
    CASES.append(dict(name=name, mlir="\n".join(lines) + "\n",
                      inputs=inputs, ref=ref, tol=tol or {}))


def unary_case(name, op, x, fn, et="f32", tol=None, attr=""):
    t = T(x.shape, et)
    case(name, [x], ["%%0 = tessel.%s %%a0%s : %s" % (op, attr, t)],
         [("%0", t)], fn, tol)


def binary_case(name, op, x, y, fn, et="f32", tol=None):
    t = T(x.shape, et)
    case(name, [x, y], ["%%0 = tessel.%s %%a0, %%a1 : %s" % (op, t)],
         [("%0", t)], fn, tol)


def f64(x):
    return np.asarray(x, dtype=np.float64)


def as_f32(fn):
    """Reference computed in float64 and rounded once to f32."""
    def g(*xs):
        with np.errstate(all="ignore"):
            return fn(*[f64(x) for x in xs]).astype(np.float32)
    return g


def randf(*shape, lo=-3.0, hi=3.0, dtype=np.float32):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def randi(*shape, lo=-100, hi=100, dtype=np.int32):
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


verf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf(x):
    return x * 0.5 * (1.0 + verf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return x * 0.5 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                    (x + 0.044715 * x ** 3)))


def int_div(a, b):
    a, b = a.astype(np.int64), b.astype(np.int64)
    q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
    return (np.sign(a) * np.sign(b) * q).astype(np.int32)


