"""numpy_check.py cases: elementwise math, converts, shapes, contractions
and reductions."""

import math

import numpy as np

from safetensors_io import BF16, bf16, bf16_exact
from numpy_check_lib import (
    T,
    as_f32,
    binary_case,
    case,
    f64,
    gelu_erf,
    gelu_tanh,
    int_div,
    randf,
    randi,
    rng,
    unary_case)

# --------------------------------------------------------------------------
# Cases: elementwise
# --------------------------------------------------------------------------

X = randf(4, 8)
UNARY_F32 = [
    ("neg", X, lambda x: -x),
    ("abs", X, np.abs),
    ("relu", X, lambda x: np.maximum(x, 0)),
    ("exp", X, np.exp),
    ("log", randf(4, 8, lo=1e-3, hi=50.0), np.log),
    ("sqrt", randf(4, 8, lo=0.0, hi=50.0), np.sqrt),
    ("rsqrt", randf(4, 8, lo=1e-3, hi=50.0), lambda x: 1.0 / np.sqrt(x)),
    ("tanh", X, np.tanh),
    ("logistic", randf(4, 8, lo=-20, hi=20),
     lambda x: 1.0 / (1.0 + np.exp(-x))),
    ("silu", randf(4, 8, lo=-20, hi=20), lambda x: x / (1.0 + np.exp(-x))),
    ("sin", randf(4, 8, lo=-10, hi=10), np.sin),
    ("cos", randf(4, 8, lo=-10, hi=10), np.cos),
]
for op, x, fn in UNARY_F32:
    unary_case("%s_f32" % op, op, x, as_f32(fn))

unary_case("gelu_erf_f32", "gelu", randf(4, 8, lo=-6, hi=6),
           as_f32(gelu_erf), attr=" approximation = erf")
unary_case("gelu_tanh_f32", "gelu", randf(4, 8, lo=-6, hi=6),
           as_f32(gelu_tanh), attr=" approximation = tanh")

SPECIAL = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 100.0],
                   dtype=np.float32)
unary_case("log_special_f32", "log", SPECIAL, as_f32(np.log))
unary_case("sqrt_special_f32", "sqrt", SPECIAL, as_f32(np.sqrt))
unary_case("exp_special_f32", "exp", SPECIAL, as_f32(np.exp))
# relu is max(x, 0), and max propagates NaN.
unary_case("relu_special_f32", "relu", SPECIAL,
           as_f32(lambda x: np.maximum(x, 0.0)))

XI = randi(4, 8)
unary_case("neg_i32", "neg", XI, lambda x: -x, et="i32")
unary_case("abs_i32", "abs", XI, np.abs, et="i32")
unary_case("relu_i32", "relu", XI, lambda x: np.maximum(x, 0), et="i32")
unary_case("neg_i64", "neg", randi(5, dtype=np.int64, lo=-10**12, hi=10**12),
           lambda x: -x, et="i64")

A, B = randf(4, 8), randf(4, 8)
B[0, :3] = [0.0, -0.0, 0.0]  # float division by zero: IEEE inf / nan
A[0, 2] = 0.0
for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
               ("div", np.divide), ("max", np.maximum), ("min", np.minimum)]:
    binary_case("%s_f32" % op, op, A, B, as_f32(fn))
binary_case("pow_f32", "pow", randf(4, 8, lo=0.1, hi=3.0),
            randf(4, 8, lo=-3, hi=3), as_f32(np.power))
AN, BN = A.copy(), B.copy()
AN[1, 1], BN[2, 2], AN[3, 3], BN[3, 3] = np.nan, np.nan, np.nan, np.nan
binary_case("max_nan_f32", "max", AN, BN, as_f32(np.maximum))
binary_case("min_nan_f32", "min", AN, BN, as_f32(np.minimum))

AI, BI = randi(4, 8), randi(4, 8, lo=-9, hi=9)
BI[0, :4] = 0  # integer division by zero gives 0
AI[1, :4] = [7, -7, 7, -7]
BI[1, :4] = [2, 2, -2, -2]  # truncation toward zero
for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
               ("div", int_div), ("max", np.maximum), ("min", np.minimum)]:
    binary_case("%s_i32" % op, op, AI, BI, fn, et="i32")
binary_case("div_i64", "div", randi(16, dtype=np.int64, lo=-10**15,
                                    hi=10**15),
            np.array([3, -3, 0, 7, -7, 1, -1, 5] * 2, dtype=np.int64),
            lambda a, b: np.where(b == 0, 0, np.sign(a) * np.sign(b) *
                                  (np.abs(a) // np.where(b == 0, 1,
                                                         np.abs(b)))),
            et="i64")

# compare: small integer-valued floats so that ties occur; plus NaN.
CA = rng.integers(-2, 3, size=(4, 8)).astype(np.float32)
CB = rng.integers(-2, 3, size=(4, 8)).astype(np.float32)
CA[0, 0], CB[0, 1], CA[0, 2], CB[0, 2] = np.nan, np.nan, np.nan, np.nan
CA[1, 0], CB[1, 0] = -0.0, 0.0
CMP = [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
       ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]
for d, fn in CMP:
    for et, a, b in [("f32", CA, CB),
                     ("i32", CA.copy(), CB.copy())]:
        if et == "i32":
            a = np.nan_to_num(a).astype(np.int32)
            b = np.nan_to_num(b).astype(np.int32)
        t = T(a.shape, et)
        case("compare_%s_%s" % (d, et), [a, b],
             ["%%0 = tessel.compare %s, %%a0, %%a1 : %s" % (d, t)],
             [("%0", T(a.shape, "i1"))],
             lambda x, y, fn=fn: fn(x, y))

case("compare_select_f32", [CA, CB, X],
     ["%0 = tessel.compare lt, %a0, %a1 : tensor<4x8xf32>",
      "%1 = tessel.select %0, %a2, %a1 : tensor<4x8xi1>, tensor<4x8xf32>"],
     [("%1", T((4, 8)))],
     lambda a, b, x: np.where(a < b, x, b).astype(np.float32))
case("select_i32", [rng.random((3, 5)) < 0.5, randi(3, 5), randi(3, 5)],
     ["%0 = tessel.select %a0, %a1, %a2 : tensor<3x5xi1>, tensor<3x5xi32>"],
     [("%0", T((3, 5), "i32"))],
     lambda p, x, y: np.where(p, x, y).astype(np.int32))

# --------------------------------------------------------------------------
# Cases: convert
# --------------------------------------------------------------------------


def f32_from_bits(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


# Ties (low half exactly 0x8000) with even and odd kept bit, just above and
# below ties, overflow to inf, inf, nan, signed zero, subnormal.
BF_EDGE = np.concatenate([
    f32_from_bits([0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,
                   0xBF808000, 0xBF818000, 0x7F7FFFFF, 0x7F7F7FFF,
                   0x7F800000, 0xFF800000, 0x80000000, 0x00000000,
                   0x00018000, 0x00008000]),
    randf(18, lo=-1000, hi=1000)])
case("convert_f32_bf16_f32", [BF_EDGE],
     ["%0 = tessel.convert %a0 : (tensor<32xf32>) -> tensor<32xbf16>",
      "%1 = tessel.convert %0 : (tensor<32xbf16>) -> tensor<32xf32>"],
     [("%0", T((32,), "bf16")), ("%1", T((32,)))],
     lambda x: [BF16(bf16(x)), bf16(x).astype(np.float32)])
# Self-check: the bit-manipulation and the float64 emulations of bf16
# rounding agree on f32 values.
_chk = np.concatenate([BF_EDGE, randf(1000, lo=-1e4, hi=1e4),
                       f32_from_bits(rng.integers(0, 2**32, 1000,
                                                  dtype=np.uint64))])
_chk = _chk[~np.isnan(_chk)]
assert (bf16(_chk) == bf16_exact(_chk)).all(), "bf16 emulations disagree"
case("convert_bf16_nan", [np.array([np.nan, -np.nan], dtype=np.float32)],
     ["%0 = tessel.convert %a0 : (tensor<2xf32>) -> tensor<2xbf16>",
      "%1 = tessel.convert %0 : (tensor<2xbf16>) -> tensor<2xf32>"],
     [("%1", T((2,)))],
     lambda x: np.array([np.nan, np.nan], dtype=np.float32))

F2I = np.concatenate([
    np.array([2.9, -2.9, 0.5, -0.5, 1e10, -1e10, 2147483520.0,
              -2147483648.0, np.inf, -np.inf, np.nan, -0.0, 3e9, -3e9],
             dtype=np.float32),
    randf(18, lo=-1000, hi=1000)])


def f32_to_i32(x):
    x = f64(x)
    r = np.trunc(np.nan_to_num(x, nan=0.0, posinf=3e9, neginf=-3e9))
    return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)


case("convert_f32_i32", [F2I],
     ["%0 = tessel.convert %a0 : (tensor<32xf32>) -> tensor<32xi32>"],
     [("%0", T((32,), "i32"))], f32_to_i32)


def f32_to_i64(x):
    out = []
    for v in f64(x):
        if math.isnan(v):
            out.append(0)
        elif v >= 2.0**63:
            out.append(2**63 - 1)
        elif v < -2.0**63:
            out.append(-2**63)
        else:
            out.append(int(math.trunc(v)))
    return np.array(out, dtype=np.int64)


case("convert_f32_i64", [F2I],
     ["%0 = tessel.convert %a0 : (tensor<32xf32>) -> tensor<32xi64>"],
     [("%0", T((32,), "i64"))], f32_to_i64)


I2F = np.concatenate([
    np.array([16777217, 16777219, -16777217, 2**31 - 1, -2**31, 0, 1, -1,
              33554435, 123456789], dtype=np.int32),
    randi(6, lo=-10**9, hi=10**9)])
case("convert_i32_f32", [I2F],
     ["%0 = tessel.convert %a0 : (tensor<16xi32>) -> tensor<16xf32>"],
     [("%0", T((16,)))], lambda x: x.astype(np.float32), tol={"F32": (0, 0)})
case("convert_i32_bf16", [I2F],
     ["%0 = tessel.convert %a0 : (tensor<16xi32>) -> tensor<16xbf16>"],
     [("%0", T((16,), "bf16"))], lambda x: BF16(bf16_exact(f64(x))))
case("convert_to_i1", [SPECIAL, np.array([0, 1, -1, 5, 0, 2**31 - 1, -2**31,
                                          0], dtype=np.int32)],
     ["%0 = tessel.convert %a0 : (tensor<8xf32>) -> tensor<8xi1>",
      "%1 = tessel.convert %a1 : (tensor<8xi32>) -> tensor<8xi1>"],
     [("%0", T((8,), "i1")), ("%1", T((8,), "i1"))],
     lambda x, y: [x != 0, y != 0])
case("convert_from_i1", [np.array([True, False, True, True, False])],
     ["%0 = tessel.convert %a0 : (tensor<5xi1>) -> tensor<5xf32>",
      "%1 = tessel.convert %a0 : (tensor<5xi1>) -> tensor<5xi32>"],
     [("%0", T((5,))), ("%1", T((5,), "i32"))],
     lambda p: [p.astype(np.float32), p.astype(np.int32)])
def _f16(x):
    with np.errstate(over="ignore"):
        return x.astype(np.float16)


F16SRC = np.concatenate([np.array([65504.0, 65520.0, 1e5, 1.0 + 2**-11,
                                   1.0 + 3 * 2**-11, 6e-8, np.inf, -0.0],
                                  dtype=np.float32),
                         randf(8, lo=-100, hi=100)])
case("convert_f32_f16_f64", [F16SRC],
     ["%0 = tessel.convert %a0 : (tensor<16xf32>) -> tensor<16xf16>",
      "%1 = tessel.convert %0 : (tensor<16xf16>) -> tensor<16xf64>"],
     [("%0", T((16,), "f16")), ("%1", T((16,), "f64"))],
     lambda x: [_f16(x), _f16(x).astype(np.float64)],
     tol={"F16": (0, 0), "F64": (0, 0)})
case("convert_f64_f32", [np.array([1.0 + 2**-24, 1.0 + 3 * 2**-24,
                                   1.0 + 2**-24 + 2**-50, 1e300, -1e300,
                                   1e-50, math.pi, -math.e])],
     ["%0 = tessel.convert %a0 : (tensor<8xf64>) -> tensor<8xf32>"],
     [("%0", T((8,)))], as_f32(lambda x: x), tol={"F32": (0, 0)})

# --------------------------------------------------------------------------
# Cases: shapes
# --------------------------------------------------------------------------

BX = randf(3, 1)
case("broadcast_in_dim_size1", [BX],
     ["%0 = tessel.broadcast_in_dim %a0, dims = [0, 2] : "
      "(tensor<3x1xf32>) -> tensor<3x4x5xf32>"],
     [("%0", T((3, 4, 5)))],
     lambda x: np.broadcast_to(x[:, None, :], (3, 4, 5)).astype(np.float32))
case("broadcast_in_dim_bias", [randi(5)],
     ["%0 = tessel.broadcast_in_dim %a0, dims = [1] : "
      "(tensor<5xi32>) -> tensor<2x5x3xi32>"],
     [("%0", T((2, 5, 3), "i32"))],
     lambda x: np.broadcast_to(x[None, :, None], (2, 5, 3)).astype(np.int32))
case("broadcast_in_dim_scalar", [np.array(2.5, dtype=np.float32)],
     ["%0 = tessel.broadcast_in_dim %a0, dims = [] : "
      "(tensor<f32>) -> tensor<2x3xf32>"],
     [("%0", T((2, 3)))], lambda x: np.full((2, 3), x, dtype=np.float32))
R = randf(4, 6)
case("reshape", [R],
     ["%0 = tessel.reshape %a0 : (tensor<4x6xf32>) -> tensor<2x3x4xf32>"],
     [("%0", T((2, 3, 4)))], lambda x: x.reshape(2, 3, 4).astype(np.float32))
TR = randi(2, 3, 4)
case("transpose_3d", [TR],
     ["%0 = tessel.transpose %a0, permutation = [2, 0, 1] : "
      "(tensor<2x3x4xi32>) -> tensor<4x2x3xi32>"],
     [("%0", T((4, 2, 3), "i32"))],
     lambda x: np.transpose(x, (2, 0, 1)).astype(np.int32))
case("transpose_3d_f32", [randf(2, 3, 4)],
     ["%0 = tessel.transpose %a0, permutation = [1, 2, 0] : "
      "(tensor<2x3x4xf32>) -> tensor<3x4x2xf32>"],
     [("%0", T((3, 4, 2)))],
     lambda x: np.transpose(x, (1, 2, 0)).astype(np.float32))
SL = randf(6, 9, 4)
case("slice_strided", [SL],
     ["%0 = tessel.slice %a0, start = [1, 2, 0], limit = [6, 9, 3], "
      "strides = [2, 3, 1] : (tensor<6x9x4xf32>) -> tensor<3x3x3xf32>"],
     [("%0", T((3, 3, 3)))], lambda x: x[1:6:2, 2:9:3, 0:3].astype(np.float32))
case("slice_strided_uneven", [SL],
     ["%0 = tessel.slice %a0, start = [0, 1, 1], limit = [5, 8, 4], "
      "strides = [4, 2, 2] : (tensor<6x9x4xf32>) -> tensor<2x4x2xf32>"],
     [("%0", T((2, 4, 2)))],
     lambda x: x[0:5:4, 1:8:2, 1:4:2].astype(np.float32))
C1, C2, C3 = randf(2, 1, 3), randf(2, 4, 3), randf(2, 2, 3)
case("concatenate_3", [C1, C2, C3],
     ["%0 = tessel.concatenate %a0, %a1, %a2 dim = 1 : (tensor<2x1x3xf32>, "
      "tensor<2x4x3xf32>, tensor<2x2x3xf32>) -> tensor<2x7x3xf32>"],
     [("%0", T((2, 7, 3)))],
     lambda a, b, c: np.concatenate([a, b, c], axis=1).astype(np.float32))
case("concatenate_3_i32_dim0", [randi(1, 3), randi(2, 3), randi(3, 3)],
     ["%0 = tessel.concatenate %a0, %a1, %a2 dim = 0 : (tensor<1x3xi32>, "
      "tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<6x3xi32>"],
     [("%0", T((6, 3), "i32"))],
     lambda a, b, c: np.concatenate([a, b, c], axis=0).astype(np.int32))
PX = randf(3, 4)
case("pad_neg_inf", [PX],
     ["%0 = tessel.pad %a0, low = [1, 0], high = [2, 3], "
      "value = 0xFFF0000000000000 : (tensor<3x4xf32>) -> tensor<6x7xf32>"],
     [("%0", T((6, 7)))],
     lambda x: np.pad(x, ((1, 2), (0, 3)),
                      constant_values=-np.inf).astype(np.float32))
case("pad_value_i32", [randi(2, 3)],
     ["%0 = tessel.pad %a0, low = [2, 1], high = [0, 1], value = 7.0 : "
      "(tensor<2x3xi32>) -> tensor<4x5xi32>"],
     [("%0", T((4, 5), "i32"))],
     lambda x: np.pad(x, ((2, 0), (1, 1)), constant_values=7).astype(np.int32))
# The pad value is converted to the element type as tessel.convert would
# (truncation toward zero, saturation, NaN -> 0, i1 = x != 0).
case("pad_value_i32_converted", [randi(2, 2)],
     ["%0 = tessel.pad %a0, low = [0, 1], high = [0, 0], value = -2.7 : "
      "(tensor<2x2xi32>) -> tensor<2x3xi32>"],
     [("%0", T((2, 3), "i32"))],
     lambda x: np.pad(x, ((0, 0), (1, 0)), constant_values=-2))
case("pad_value_f32", [PX],
     ["%0 = tessel.pad %a0, low = [0, 2], high = [1, 0], value = 1.5 : "
      "(tensor<3x4xf32>) -> tensor<4x6xf32>"],
     [("%0", T((4, 6)))],
     lambda x: np.pad(x, ((0, 1), (2, 0)),
                      constant_values=1.5).astype(np.float32))
case("iota_i32", [],
     ["%0 = tessel.iota dim = 1 : tensor<2x5x3xi32>",
      "%1 = tessel.iota dim = 2 : tensor<2x5x3xf32>",
      "%2 = tessel.iota dim = 0 : tensor<4xi64>"],
     [("%0", T((2, 5, 3), "i32")), ("%1", T((2, 5, 3))),
      ("%2", T((4,), "i64"))],
     lambda: [np.broadcast_to(np.arange(5)[None, :, None],
                              (2, 5, 3)).astype(np.int32),
              np.broadcast_to(np.arange(3)[None, None, :],
                              (2, 5, 3)).astype(np.float32),
              np.arange(4, dtype=np.int64)])

# --------------------------------------------------------------------------
# Cases: contractions and reductions
# --------------------------------------------------------------------------

DOT_TOL = {"F32": (2e-6, 1e-6)}
case("dot_matmul", [randf(5, 7), randf(7, 3)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1] x [0] : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>"],
     [("%0", T((5, 3)))], as_f32(lambda a, b: a @ b), tol=DOT_TOL)
case("dot_attention_bhsd", [randf(2, 3, 4, 8), randf(2, 3, 5, 8)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [0, 1] x [0, 1], "
      "contracting = [3] x [3] : (tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>) "
      "-> tensor<2x3x4x5xf32>"],
     [("%0", T((2, 3, 4, 5)))],
     as_f32(lambda q, k: np.einsum("bhsd,bhtd->bhst", q, k)), tol=DOT_TOL)
case("dot_contract_first", [randf(6, 4), randf(6, 3)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[0] x [0] : (tensor<6x4xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>"],
     [("%0", T((4, 3)))], as_f32(lambda a, b: a.T @ b), tol=DOT_TOL)
case("dot_batch_not_leading", [randf(4, 2, 6), randf(6, 2, 3)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [1] x [1], contracting = "
      "[2] x [0] : (tensor<4x2x6xf32>, tensor<6x2x3xf32>) -> "
      "tensor<2x4x3xf32>"],
     [("%0", T((2, 4, 3)))],
     as_f32(lambda a, b: np.einsum("sbd,dbt->bst", a, b)), tol=DOT_TOL)
case("dot_two_contracting", [randf(3, 4, 5), randf(5, 2, 4)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1, 2] x [2, 0] : (tensor<3x4x5xf32>, tensor<5x2x4xf32>) -> "
      "tensor<3x2xf32>"],
     [("%0", T((3, 2)))],
     as_f32(lambda a, b: np.einsum("ikl,lnk->in", a, b)), tol=DOT_TOL)
case("dot_i32", [randi(3, 4, lo=-50, hi=50), randi(4, 2, lo=-50, hi=50)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1] x [0] : (tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>"],
     [("%0", T((3, 2), "i32"))], lambda a, b: (a @ b).astype(np.int32))

RD = randf(3, 4, 5)
for kind, fn in [("sum", np.sum), ("max", np.max), ("min", np.min),
                 ("mean", np.mean)]:
    case("reduce_%s_f32" % kind, [RD],
         ["%%0 = tessel.reduce %s %%a0, dims = [0, 2] : "
          "(tensor<3x4x5xf32>) -> tensor<4xf32>" % kind,
          "%%1 = tessel.reduce %s %%a0, dims = [0, 1, 2] : "
          "(tensor<3x4x5xf32>) -> tensor<f32>" % kind,
          "%%2 = tessel.reduce %s %%a0, dims = [1] : "
          "(tensor<3x4x5xf32>) -> tensor<3x5xf32>" % kind],
         [("%0", T((4,))), ("%1", T(())), ("%2", T((3, 5)))],
         lambda x, fn=fn: [fn(f64(x), axis=(0, 2)).astype(np.float32),
                           np.asarray(fn(f64(x))).astype(np.float32),
                           fn(f64(x), axis=1).astype(np.float32)])
RDI = randi(3, 4, 5)
for kind, fn in [("sum", np.sum), ("max", np.max), ("min", np.min)]:
    case("reduce_%s_i32" % kind, [RDI],
         ["%%0 = tessel.reduce %s %%a0, dims = [1, 2] : "
          "(tensor<3x4x5xi32>) -> tensor<3xi32>" % kind],
         [("%0", T((3,), "i32"))],
         lambda x, fn=fn: fn(x, axis=(1, 2)).astype(np.int32))
BIG = np.array([2**60 + 1, 2**60 + 3, -5, 2**40 + 7], dtype=np.int64)
case("int64_exact", [BIG, np.ones((4, 1), dtype=np.int64)],
     ["%0 = tessel.reduce sum %a0, dims = [0] : (tensor<4xi64>) -> "
      "tensor<i64>",
      "%1 = tessel.cumsum %a0, dim = 0 : tensor<4xi64>",
      "%2 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[0] x [0] : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<1xi64>",
      "%3 = tessel.reduce max %a0, dims = [0] : (tensor<4xi64>) -> "
      "tensor<i64>",
      "%4 = tessel.add %a0, %a0 : tensor<4xi64>"],
     [("%0", T((), "i64")), ("%1", T((4,), "i64")), ("%2", T((1,), "i64")),
      ("%3", T((), "i64")), ("%4", T((4,), "i64"))],
     lambda x, w: [np.asarray(x.sum()), np.cumsum(x), x @ w,
                   np.asarray(x.max()), x + x])
case("reduce_empty", [np.zeros((3, 0), dtype=np.float32),
                      np.zeros((3, 0), dtype=np.int32)],
     ["%0 = tessel.reduce sum %a0, dims = [1] : (tensor<3x0xf32>) -> "
      "tensor<3xf32>",
      "%1 = tessel.reduce max %a0, dims = [1] : (tensor<3x0xf32>) -> "
      "tensor<3xf32>",
      "%2 = tessel.reduce min %a0, dims = [1] : (tensor<3x0xf32>) -> "
      "tensor<3xf32>",
      "%3 = tessel.reduce mean %a0, dims = [1] : (tensor<3x0xf32>) -> "
      "tensor<3xf32>",
      "%4 = tessel.reduce max %a1, dims = [1] : (tensor<3x0xi32>) -> "
      "tensor<3xi32>",
      "%5 = tessel.reduce min %a1, dims = [1] : (tensor<3x0xi32>) -> "
      "tensor<3xi32>"],
     [("%0", T((3,))), ("%1", T((3,))), ("%2", T((3,))), ("%3", T((3,))),
      ("%4", T((3,), "i32")), ("%5", T((3,), "i32"))],
     lambda x, y: [np.zeros(3, np.float32), np.full(3, -np.inf, np.float32),
                   np.full(3, np.inf, np.float32),
                   np.full(3, np.nan, np.float32),
                   np.full(3, -2**31, np.int32),
                   np.full(3, 2**31 - 1, np.int32)])
case("cumsum_f32", [randf(3, 6, 2)],
     ["%0 = tessel.cumsum %a0, dim = 1 : tensor<3x6x2xf32>"],
     [("%0", T((3, 6, 2)))], as_f32(lambda x: np.cumsum(x, axis=1)),
     tol={"F32": (2e-6, 2e-6)})
case("cumsum_i32", [randi(4, 5)],
     ["%0 = tessel.cumsum %a0, dim = 0 : tensor<4x5xi32>"],
     [("%0", T((4, 5), "i32"))],
     lambda x: np.cumsum(x, axis=0).astype(np.int32))

