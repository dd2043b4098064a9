"""numpy_check.py cases: neural-network ops, low and high precision, and
single-rounding regressions."""

import math

import numpy as np

from safetensors_io import BF16, bf16, bf16_exact
from numpy_check_lib import (
    T,
    as_f32,
    case,
    f64,
    gelu_erf,
    randf,
    randi,
    rng)

# --------------------------------------------------------------------------
# Cases: neural-network ops
# --------------------------------------------------------------------------

NN_TOL = {"F32": (1e-5, 1e-6)}


def softmax(x, axis):
    with np.errstate(invalid="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(x - m)
        s = np.sum(e, axis=axis, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)


SM = randf(2, 5, 3, lo=-5, hi=5)
SM[0, 1, 0] = -np.inf        # one masked entry
SM[1, :, 2] = -np.inf        # an all -inf slice along dim 1 gives zeros
case("softmax_middle_dim", [SM],
     ["%0 = tessel.softmax %a0, dim = 1 : tensor<2x5x3xf32>"],
     [("%0", T((2, 5, 3)))], as_f32(lambda x: softmax(x, 1)), tol=NN_TOL)
case("softmax_last_dim_large", [randf(3, 7, lo=-80, hi=80)],
     ["%0 = tessel.softmax %a0, dim = 1 : tensor<3x7xf32>"],
     [("%0", T((3, 7)))], as_f32(lambda x: softmax(x, 1)), tol=NN_TOL)


def layer_norm(x, g, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def rms_norm(x, g, eps):
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps) * g


LN = randf(2, 3, 16) + 2.0
case("layer_norm", [LN, randf(16), randf(16)],
     ["%0 = tessel.layer_norm %a0, %a1, %a2, epsilon = 1.0e-05 : "
      "tensor<2x3x16xf32>, tensor<16xf32>"],
     [("%0", T((2, 3, 16)))],
     as_f32(lambda x, g, b: layer_norm(x, g, b, 1e-5)), tol=NN_TOL)
case("rms_norm", [LN, randf(16)],
     ["%0 = tessel.rms_norm %a0, %a1, epsilon = 1.0e-06 : "
      "tensor<2x3x16xf32>, tensor<16xf32>"],
     [("%0", T((2, 3, 16)))],
     as_f32(lambda x, g: rms_norm(x, g, 1e-6)), tol=NN_TOL)


def take_zero(table, idx, axis):
    n = table.shape[axis]
    ok = (idx >= 0) & (idx < n)
    out = np.take(table, np.where(ok, idx, 0), axis=axis)
    mask_shape = [1] * axis + list(idx.shape) + \
        [1] * (table.ndim - axis - 1)
    return np.where(ok.reshape(mask_shape), out, 0).astype(table.dtype)


GT = randf(6, 4)
GI = np.array([[0, 5, 6, -1], [2, 2, 100, -7], [3, 1, 4, 0]], dtype=np.int32)
case("gather_axis0", [GT, GI],
     ["%0 = tessel.gather %a0[%a1], axis = 0 : (tensor<6x4xf32>, "
      "tensor<3x4xi32>) -> tensor<3x4x4xf32>"],
     [("%0", T((3, 4, 4)))], lambda t, i: take_zero(t, i, 0))
GT3 = randi(2, 5, 3)
GI1 = np.array([4, -1, 0, 5, 2**32 + 1, -2**32 + 2, 2], dtype=np.int64)
case("gather_axis1_i64_idx", [GT3, GI1],
     ["%0 = tessel.gather %a0[%a1], axis = 1 : (tensor<2x5x3xi32>, "
      "tensor<7xi64>) -> tensor<2x7x3xi32>"],
     [("%0", T((2, 7, 3), "i32"))], lambda t, i: take_zero(t, i, 1))
case("gather_axis1_2d_idx", [randf(3, 4, 2),
                            np.array([[3, 0], [-2, 4]], dtype=np.int32)],
     ["%0 = tessel.gather %a0[%a1], axis = 1 : (tensor<3x4x2xf32>, "
      "tensor<2x2xi32>) -> tensor<3x2x2x2xf32>"],
     [("%0", T((3, 2, 2, 2)))], lambda t, i: take_zero(t, i, 1))


def scatter_add(base, idx, upd, axis):
    out = base.astype(np.float64 if base.dtype.kind == "f" else np.int64)
    n = base.shape[axis]
    upd = np.asarray(upd)
    for pos in np.ndindex(*idx.shape):
        j = int(idx[pos])
        if not 0 <= j < n:
            continue
        src = (slice(None),) * axis + pos
        dst = (slice(None),) * axis + (j,)
        out[dst] += upd[src]
    return out.astype(base.dtype)


SB = randf(5, 3)
SI = np.array([[1, 1, 4], [-1, 5, 1]], dtype=np.int32)
SU = randf(2, 3, 3)
case("scatter_add_axis0", [SB, SI, SU],
     ["%0 = tessel.scatter_add %a0[%a1], %a2, axis = 0 : (tensor<5x3xf32>, "
      "tensor<2x3xi32>, tensor<2x3x3xf32>) -> tensor<5x3xf32>"],
     [("%0", T((5, 3)))], lambda b, i, u: scatter_add(b, i, u, 0),
     tol={"F32": (2e-6, 2e-6)})
SBI, SUI = randi(2, 4), randi(2, 5)
SII = np.array([3, 0, 3, 9, -3], dtype=np.int32)
case("scatter_add_axis1_i32", [SBI, SII, SUI],
     ["%0 = tessel.scatter_add %a0[%a1], %a2, axis = 1 : (tensor<2x4xi32>, "
      "tensor<5xi32>, tensor<2x5xi32>) -> tensor<2x4xi32>"],
     [("%0", T((2, 4), "i32"))], lambda b, i, u: scatter_add(b, i, u, 1))

case("scatter_add_i64_idx", [SB, np.array([2**32 + 1, 1, -2**32 + 3, 3],
                                          dtype=np.int64), randf(4, 3)],
     ["%0 = tessel.scatter_add %a0[%a1], %a2, axis = 0 : (tensor<5x3xf32>, "
      "tensor<4xi64>, tensor<4x3xf32>) -> tensor<5x3xf32>"],
     [("%0", T((5, 3)))], lambda b, i, u: scatter_add(b, i, u, 0),
     tol={"F32": (2e-6, 2e-6)})


def one_hot(idx, depth, dtype):
    return (idx[..., None] == np.arange(depth)).astype(dtype)


OH = np.array([[0, 3, 4, -1], [2, 2, 7, 1]], dtype=np.int32)
case("one_hot", [OH],
     ["%0 = tessel.one_hot %a0 : (tensor<2x4xi32>) -> tensor<2x4x4xf32>",
      "%1 = tessel.one_hot %a0 : (tensor<2x4xi32>) -> tensor<2x4x5xi32>"],
     [("%0", T((2, 4, 4))), ("%1", T((2, 4, 5), "i32"))],
     lambda i: [one_hot(i, 4, np.float32), one_hot(i, 5, np.int32)])
case("one_hot_i64", [np.array([2**32 + 2, 2, -2**32 + 1, 0], dtype=np.int64)],
     ["%0 = tessel.one_hot %a0 : (tensor<4xi64>) -> tensor<4x3xi64>"],
     [("%0", T((4, 3), "i64"))], lambda i: one_hot(i, 3, np.int64))


def top_k(x, k):
    # Stable sort on -x: ties keep the lower index first.
    order = np.argsort(-f64(x), axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, order, axis=-1), order.astype(np.int32)]


TK = rng.integers(0, 4, size=(3, 2, 8)).astype(np.float32)  # many ties
case("top_k_ties_f32", [TK],
     ["%0, %1 = tessel.top_k %a0, k = 3 : (tensor<3x2x8xf32>) -> "
      "(tensor<3x2x3xf32>, tensor<3x2x3xi32>)"],
     [("%0", T((3, 2, 3))), ("%1", T((3, 2, 3), "i32"))],
     lambda x: top_k(x, 3))
case("top_k_k1", [TK],
     ["%0, %1 = tessel.top_k %a0, k = 1 : (tensor<3x2x8xf32>) -> "
      "(tensor<3x2x1xf32>, tensor<3x2x1xi32>)"],
     [("%0", T((3, 2, 1))), ("%1", T((3, 2, 1), "i32"))],
     lambda x: top_k(x, 1))
TKI = randi(4, 6, lo=-3, hi=3)
case("top_k_i32_full", [TKI],
     ["%0, %1 = tessel.top_k %a0, k = 6 : (tensor<4x6xi32>) -> "
      "(tensor<4x6xi32>, tensor<4x6xi32>)"],
     [("%0", T((4, 6), "i32")), ("%1", T((4, 6), "i32"))],
     lambda x: top_k(x, 6))
case("top_k_random_f32", [randf(5, 9)],
     ["%0, %1 = tessel.top_k %a0, k = 2 : (tensor<5x9xf32>) -> "
      "(tensor<5x2xf32>, tensor<5x2xi32>)"],
     [("%0", T((5, 2))), ("%1", T((5, 2), "i32"))],
     lambda x: top_k(x, 2))


def xent(logits, labels, ignore, reduction):
    x = f64(logits)
    c = x.shape[-1]
    m = x.max(axis=-1, keepdims=True)
    lse = (np.log(np.exp(x - m).sum(axis=-1, keepdims=True)) + m)[..., 0]
    valid = (labels != ignore) & (labels >= 0) & (labels < c)
    safe = np.where(valid, labels, 0)
    picked = np.take_along_axis(x, safe[..., None], axis=-1)[..., 0]
    loss = np.where(valid, lse - picked, 0.0)
    if reduction == "none":
        return loss.astype(np.float32)
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype=np.float32)
    n = valid.sum()
    return np.asarray(loss.sum() / n if n else 0.0, dtype=np.float32)


XL = randf(2, 4, 10, lo=-6, hi=6)
# -100 ignored; 10, -5 out of range, so also ignored.
XY = np.array([[1, -100, 9, -5], [0, 10, -100, 3]], dtype=np.int32)
for red, rt in [("mean", T(())), ("sum", T(())), ("none", T((2, 4)))]:
    case("softmax_cross_entropy_%s" % red, [XL, XY],
         ["%%0 = tessel.softmax_cross_entropy %%a0, %%a1, ignore_index = "
          "-100, reduction = %s : (tensor<2x4x10xf32>, tensor<2x4xi32>) -> "
          "%s" % (red, rt)],
         [("%0", rt)], lambda x, y, red=red: xent(x, y, -100, red),
         tol=NN_TOL)
case("softmax_cross_entropy_mean_all_ignored",
     [XL[:1, :2], np.array([[-100, -100]], dtype=np.int32)],
     ["%0 = tessel.softmax_cross_entropy %a0, %a1, ignore_index = -100, "
      "reduction = mean : (tensor<1x2x10xf32>, tensor<1x2xi32>) -> "
      "tensor<f32>"],
     [("%0", T(()))], lambda x, y: xent(x, y, -100, "mean"), tol=NN_TOL)

# --------------------------------------------------------------------------
# Cases: bf16, f16 and f64
# --------------------------------------------------------------------------

BA, BB = bf16(randf(4, 8)), bf16(randf(4, 8))
case("add_bf16", [BF16(BA), BF16(BB)],
     ["%0 = tessel.add %a0, %a1 : tensor<4x8xbf16>",
      "%1 = tessel.mul %a0, %a1 : tensor<4x8xbf16>"],
     [("%0", T((4, 8), "bf16")), ("%1", T((4, 8), "bf16"))],
     lambda a, b: [BF16(bf16_exact(f64(a) + f64(b))),
                   BF16(bf16_exact(f64(a) * f64(b)))])
BL, BR = bf16(randf(3, 16)), bf16(randf(16, 5))
case("dot_bf16", [BF16(BL), BF16(BR)],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1] x [0] : (tensor<3x16xbf16>, tensor<16x5xbf16>) -> "
      "tensor<3x5xbf16>"],
     [("%0", T((3, 5), "bf16"))],
     lambda a, b: BF16(bf16_exact(f64(a) @ f64(b))))
case("exp_bf16", [BF16(BA)],
     ["%0 = tessel.exp %a0 : tensor<4x8xbf16>"],
     [("%0", T((4, 8), "bf16"))],
     lambda a: BF16(bf16_exact(np.exp(f64(a)))),
     # exp in double may differ from numpy's by an ulp of double, which can
     # only matter next to a bf16 tie; allow one bf16 ulp.
     tol={"BF16": (2.0**-8, 0.0)})
HA, HB = randf(4, 8).astype(np.float16), randf(4, 8).astype(np.float16)
case("add_mul_f16", [HA, HB],
     ["%0 = tessel.add %a0, %a1 : tensor<4x8xf16>",
      "%1 = tessel.mul %a0, %a1 : tensor<4x8xf16>"],
     [("%0", T((4, 8), "f16")), ("%1", T((4, 8), "f16"))],
     lambda a, b: [(f64(a) + f64(b)).astype(np.float16),
                   (f64(a) * f64(b)).astype(np.float16)],
     tol={"F16": (0, 0)})
DA, DB = randf(4, 8, dtype=np.float64), randf(8, 3, dtype=np.float64)
case("f64_ops", [DA, DB],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1] x [0] : (tensor<4x8xf64>, tensor<8x3xf64>) -> tensor<4x3xf64>",
      "%1 = tessel.exp %a0 : tensor<4x8xf64>",
      "%2 = tessel.tanh %a0 : tensor<4x8xf64>",
      "%3 = tessel.softmax %a0, dim = 1 : tensor<4x8xf64>",
      "%4 = tessel.reduce sum %a0, dims = [0] : (tensor<4x8xf64>) -> "
      "tensor<8xf64>",
      "%5 = tessel.div %a0, %a0 : tensor<4x8xf64>",
      "%6 = tessel.gelu %a0 approximation = erf : tensor<4x8xf64>"],
     [("%0", T((4, 3), "f64")), ("%1", T((4, 8), "f64")),
      ("%2", T((4, 8), "f64")), ("%3", T((4, 8), "f64")),
      ("%4", T((8,), "f64")), ("%5", T((4, 8), "f64")),
      ("%6", T((4, 8), "f64"))],
     lambda a, b: [a @ b, np.exp(a), np.tanh(a), softmax(a, 1),
                   a.sum(axis=0), a / a, gelu_erf(a)])
case("layer_norm_f64", [f64(LN), randf(16, dtype=np.float64),
                        randf(16, dtype=np.float64)],
     ["%0 = tessel.layer_norm %a0, %a1, %a2, epsilon = 1.0e-05 : "
      "tensor<2x3x16xf64>, tensor<16xf64>"],
     [("%0", T((2, 3, 16), "f64"))],
     lambda x, g, b: layer_norm(x, g, b, 1e-5), tol={"F64": (1e-10, 1e-10)})



# --------------------------------------------------------------------------
# Cases: one rounding, never two (regressions: rounding through f32 first)
# --------------------------------------------------------------------------

# 1 + 2^-8 + 2^-40 lies just above the bf16 tie between 1 and 1 + 2^-7:
# rounded once it is 1 + 2^-7; rounded to f32 first it would tie to 1.
case("dot_bf16_single_rounding",
     [BF16(np.array([[1.0, 2.0**-8, 2.0**-40]])),
      BF16(np.array([[1.0], [1.0], [1.0]]))],
     ["%0 = tessel.dot_general %a0, %a1, batching = [] x [], contracting = "
      "[1] x [0] : (tensor<1x3xbf16>, tensor<3x1xbf16>) -> tensor<1x1xbf16>"],
     [("%0", T((1, 1), "bf16"))],
     lambda a, b: BF16(np.array([[1.0 + 2.0**-7]])))
case("convert_f64_bf16_f16_single_rounding",
     [np.array([1.0 + 2.0**-8 + 2.0**-30, 1.0 + 2.0**-11 + 2.0**-40])],
     ["%0 = tessel.convert %a0 : (tensor<2xf64>) -> tensor<2xbf16>",
      "%1 = tessel.convert %a0 : (tensor<2xf64>) -> tensor<2xf16>"],
     [("%0", T((2,), "bf16")), ("%1", T((2,), "f16"))],
     lambda x: [BF16(np.array([1.0 + 2.0**-7, 1.0])),
                np.array([1.0 + 2.0**-8, 1.0 + 2.0**-10], dtype=np.float16)],
     tol={"BF16": (0, 0), "F16": (0, 0)})
case("convert_int_float_single_rounding",
     [np.array([2**24 + 2**16 + 1], dtype=np.int32),
      np.array([2**62 + 2**38 + 1], dtype=np.int64)],
     ["%0 = tessel.convert %a0 : (tensor<1xi32>) -> tensor<1xbf16>",
      "%1 = tessel.convert %a1 : (tensor<1xi64>) -> tensor<1xf32>"],
     [("%0", T((1,), "bf16")), ("%1", T((1,)))],
     lambda a, b: [BF16(np.array([2.0**24 + 2.0**17])),
                   np.array([2.0**62 + 2.0**39], dtype=np.float32)],
     tol={"BF16": (0, 0), "F32": (0, 0)})
case("pad_value_saturates",
     [randi(1, 1), np.zeros((1,), dtype=np.int64),
      np.array([False])],
     ["%0 = tessel.pad %a0, low = [0, 1], high = [0, 1], value = 0xFFF0000000000000 : "
      "(tensor<1x1xi32>) -> tensor<1x3xi32>",
      "%1 = tessel.pad %a0, low = [0, 0], high = [0, 1], value = 3.0e+09 : "
      "(tensor<1x1xi32>) -> tensor<1x2xi32>",
      "%2 = tessel.pad %a1, low = [1], high = [1], value = 0x7FF8000000000000 : "
      "(tensor<1xi64>) -> tensor<3xi64>",
      "%3 = tessel.pad %a1, low = [1], high = [0], value = 1.0e+19 : "
      "(tensor<1xi64>) -> tensor<2xi64>",
      "%4 = tessel.pad %a2, low = [1], high = [0], value = 5.000000e-01 : "
      "(tensor<1xi1>) -> tensor<2xi1>"],
     [("%0", T((1, 3), "i32")), ("%1", T((1, 2), "i32")),
      ("%2", T((3,), "i64")), ("%3", T((2,), "i64")), ("%4", T((2,), "i1"))],
     lambda x, z, p: [
         np.array([[-2**31, x[0, 0], -2**31]], dtype=np.int32),
         np.array([[x[0, 0], 2**31 - 1]], dtype=np.int32),
         np.array([0, 0, 0], dtype=np.int64),
         np.array([2**63 - 1, 0], dtype=np.int64),
         np.array([True, False])])



# --------------------------------------------------------------------------
# Dropout masks: the hash computed independently, in Python integers
# --------------------------------------------------------------------------

M64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def dropout_ref(seed, shape, rate, offsets=None, global_shape=None):
    """Element j is kept when the top 24 bits of splitmix64(splitmix64(seed)
    + its global row-major index), over 2^24, are at least rate."""
    key = splitmix64(int(seed) & M64)
    threshold = math.ceil(rate * (1 << 24))
    out = np.zeros(shape, dtype=np.float32)
    offsets = offsets or [0] * len(shape)
    global_shape = global_shape or list(shape)
    for j in np.ndindex(*shape):
        index = 0
        for d, c in enumerate(j):
            index = index * global_shape[d] + c + offsets[d]
        bits = splitmix64((key + index) & M64) >> 40
        out[j] = np.float32(1.0 / (1.0 - rate)) if bits >= threshold else 0.0
    return out


# A negative seed (all 64 bits are used) and a seed beyond 2^32.
for name, seed in [("dropout_mask_seed", -7), ("dropout_mask_big_seed",
                                               (1 << 40) + 3)]:
    case(name, [np.array(seed, dtype=np.int64)],
         ["%0 = tessel.dropout_mask %a0, rate = 2.5e-01 : "
          "(tensor<i64>) -> tensor<8x16xf32>"],
         [("%0", T((8, 16)))],
         lambda s: dropout_ref(s, (8, 16), 0.25), tol={"F32": (0, 0)})
# The block [4:8, 8:16] of an [8, 16] mask.
case("dropout_mask_block", [np.array(11, dtype=np.int64),
                            np.array(4, dtype=np.int64),
                            np.array(8, dtype=np.int64)],
     ["%0 = tessel.dropout_mask %a0 at [%a1, %a2] of [8, 16], rate = "
      "5.0e-01 : (tensor<i64>, tensor<i64>, tensor<i64>) -> "
      "tensor<4x8xf32>"],
     [("%0", T((4, 8)))],
     lambda s, o0, o1: dropout_ref(s, (4, 8), 0.5, [4, 8], [8, 16]),
     tol={"F32": (0, 0)})
