#!/usr/bin/env python3
"""Bit-exact check of bf16/f16 conversions (Inputs/float-conversions.mlir).

  float_conversions.py inputs IN.st      writes the edge-value inputs
  float_conversions.py check OUT.st      compares OUT's bits with a reference

The reference is independent of the code under test: each finite value is
rounded exactly (Python fractions: nearest, ties to even, subnormals,
overflow to infinity); NaN becomes the quiet NaN with the top payload bits
and the sign kept (what IEEE 754 recommends and LLVM's APFloat does).
"""
import json
import os
import random
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import safetensors_io  # noqa: E402

# (exponent bits, fraction bits) of each format.
FORMATS = {"bf16": (8, 7), "f16": (5, 10), "f32": (8, 23), "f64": (11, 52)}
N_F32, N_F64, N_INT, N_SMALL = 256, 64, 16, 64


def decode(bits, fmt):
    """bits -> ('nan', sign, payload) | ('inf', sign) | ('num', Fraction)."""
    e_bits, m_bits = FORMATS[fmt]
    sign = bits >> (e_bits + m_bits) & 1
    e = bits >> m_bits & ((1 << e_bits) - 1)
    m = bits & ((1 << m_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if e == (1 << e_bits) - 1:
        return ("nan", sign, m) if m else ("inf", sign)
    v = Fraction(m, 1 << m_bits) * (Fraction(2) ** (1 - bias)) if e == 0 else \
        (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)
    return ("num", -v if sign else v, sign)


def encode(value, fmt):
    """A decoded value -> bits of `fmt`, rounded once to nearest even."""
    e_bits, m_bits = FORMATS[fmt]
    sign_shift = e_bits + m_bits
    inf = ((1 << e_bits) - 1) << m_bits
    if value[0] == "nan":
        _, sign, payload, src_bits = value
        top = payload >> max(0, src_bits - m_bits) if src_bits > m_bits \
            else payload << (m_bits - src_bits)
        quiet = 1 << (m_bits - 1)
        return sign << sign_shift | inf | quiet | top
    if value[0] == "inf":
        return value[1] << sign_shift | inf
    v, sign = value[1], value[2]
    a = abs(v)
    bias = (1 << (e_bits - 1)) - 1
    emin = 1 - bias
    if a == 0:
        return sign << sign_shift
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    scaled = a / Fraction(2) ** (e - m_bits)  # significand in units of ulp
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * r
    if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
        q += 1
    if q >= 1 << (m_bits + 1):  # carried into the next binade
        q >>= 1
        e += 1
    if e > bias:
        return sign << sign_shift | inf
    if q < 1 << m_bits:  # subnormal
        return sign << sign_shift | q
    return sign << sign_shift | (e + bias) << m_bits | (q - (1 << m_bits))


def convert(bits, src, dst):
    value = decode(bits, src)
    if value[0] == "nan":
        value = ("nan", value[1], value[2], FORMATS[src][1])
    return encode(value, dst)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_edges():
    e = [0, 0x80000000, 0x3f800000, 0xbf800000, 1, 0x80000001, 0x007fffff,
         0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
         0x7fc00000, 0x7f800001, 0xffc12345, 0x7fa00000,
         # bf16 ties and neighbours, at 1 and at the top of the range
         0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, 0x7f7f7fff,
         0x7f7f8000, 0xff7f8000, 0x00008000, 0x00018000, 0x807f8000,
         # f16: largest finite, the rounding edge to infinity, subnormals
         0x477fe000, 0x477fefff, 0x477ff000, 0xc77ff000, 0x38800000,
         0x387fc000, 0x387fbfff, 0x33800000, 0x33000000, 0x33000001,
         0x33c00000, 0x34200000, 0x2f800000, 0x387fe000, 0x47800000,
         0x3f801000, 0x3f803000, 0x3f802fff]
    rng = random.Random(21)
    while len(e) < N_F32:
        # random sign/exponent/fraction, biased toward small and big binades
        exp = rng.choice([rng.randrange(256), rng.randrange(96, 128),
                          rng.randrange(0, 4)])
        e.append(rng.randrange(2) << 31 | exp << 23 | rng.randrange(1 << 23))
    return e


def f64_edges():
    one = 1.0
    e = [f64_bits(x) for x in [0.0, -0.0, one, 1e39, -1e39, 1e-50, 3.4e38,
                                1 + 2**-8 + 2**-40, 1 + 2**-8 - 2**-40,
                                1 + 2**-8, 1 + 2**-11 + 2**-40, 1 + 2**-11,
                                -(1 + 2**-11 + 2**-45), 65520.0, 65519.99,
                                2.0**-25, 2.0**-25 + 2.0**-60,
                                2.0**-133 * 1.5, 2.0**-134, 2.0**-150,
                                float("inf"), float("-inf")]]
    e += [0x7ff8000000000000, 0xfff4000000000001, 0x7ff0000000000001]
    rng = random.Random(22)
    while len(e) < N_F64:
        exp = rng.choice([rng.randrange(896, 1152), rng.randrange(2048)])
        e.append(rng.randrange(2) << 63 | exp << 52 | rng.randrange(1 << 52))
    return e


INTS = [0, 1, -1, 255, 256, 257, 259, -257, 65504, 65519, 65520, 2**24 + 1,
        2**31 - 1, -2**31, 1000003, -77777]
SMALL = [x / 4 for x in range(-128, 128, 4)]  # finite, exact, both signs


def write_inputs(path):
    tensors = {
        "x": ("F32", "<I", f32_edges()), "d": ("F64", "<Q", f64_edges()),
        "h": ("F16", "<H", list(range(65536))),
        "b": ("BF16", "<H", list(range(65536))),
        "i": ("I32", "<i", INTS), "s": ("F32", "<f", SMALL)}
    safetensors_io.write_raw(path, {
        name: (dt, [len(values)], b"".join(struct.pack(fmt, v) for v in values))
        for name, (dt, fmt, values) in tensors.items()})


def read_bits(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    width = {"F16": "H", "BF16": "H", "F32": "I", "F64": "Q", "I32": "i"}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        w = width[info["dtype"]]
        count = (e - b) // struct.calcsize(w)
        out[name] = struct.unpack("<%d%s" % (count, w), data[8 + n + b:8 + n + e])
    return out


def expected():
    f32s, f64s = f32_edges(), f64_edges()
    exp = {
        "x_bf16": [convert(v, "f32", "bf16") for v in f32s],
        "x_f16": [convert(v, "f32", "f16") for v in f32s],
        "d_bf16": [convert(v, "f64", "bf16") for v in f64s],
        "d_f16": [convert(v, "f64", "f16") for v in f64s],
        "h_f32": [convert(v, "f16", "f32") for v in range(65536)],
        "b_f32": [convert(v, "bf16", "f32") for v in range(65536)],
        "h_f64": [convert(v, "f16", "f64") for v in range(65536)],
    }
    for fmt in ("bf16", "f16"):
        exp["i_" + fmt] = [encode(("num", Fraction(v), int(v < 0)), fmt)
                           for v in INTS]
        # small values through the narrow type and back to i32: truncation
        exp["s_%s_i32" % fmt] = [int(x) for x in SMALL]
    return exp


def check(path):
    got, bad = read_bits(path), 0
    for name, want in expected().items():
        have = got[name]
        diff = [k for k, (a, b) in enumerate(zip(have, want)) if a != b]
        if len(have) != len(want):
            diff = ["size"]
        if diff:
            bad += 1
            k = diff[0]
            print("%s: %d of %d differ; first at %s: got %s, want %s" % (
                name, len(diff), len(want), k,
                hex(have[k]) if k != "size" else len(have),
                hex(want[k]) if k != "size" else len(want)))
        else:
            print("%s: %d values bit-exact" % (name, len(want)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        write_inputs(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
