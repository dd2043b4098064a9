"""Tensor-wise comparison of safetensors results for 16-bit programs.

A contraction or reduction whose summed dimension is split over devices
rounds each device's partial result, and each step of the all-reduce, to the
element type (docs/partitioning.md, "Limitations"). In bf16 that is 8 bits
of mantissa at the magnitude of the partial sums, which may be far larger
than an element of the result where they cancel. So 16-bit results are
compared with an absolute tolerance scaled by the tensor's largest magnitude
(`atol * max(1, max|ref|)`, per tensor) plus `rtol * |ref|` per element: a
misplaced block or a missing reduction still fails by the size of the
values. Python standard library only.
"""
import json
import math
import struct

_FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "BOOL": "?",
            "BF16": "H", "F16": "e", "U8": "B"}


def read(path):
    """-> {name: list of floats} (bf16 widened exactly)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        fmt = _FORMATS[info["dtype"]]
        lo, hi = info["data_offsets"]
        count = (hi - lo) // struct.calcsize(fmt)
        values = struct.unpack_from("<%d%s" % (count, fmt), data, base + lo)
        if info["dtype"] == "BF16":
            values = [struct.unpack("<f", struct.pack("<I", v << 16))[0]
                      for v in values]
        out[name] = [float(v) for v in values]
    return out


def compare(ref_path, got_path, rtol, atol):
    """-> list of 'MISMATCH name: ...' / 'missing name' lines (empty: equal),
    in the format of tessel-interp --expect."""
    ref, got = read(ref_path), read(got_path)
    lines = []
    for name, r in ref.items():
        g = got.get(name)
        if g is None or len(g) != len(r):
            lines.append("missing %s" % name)
            continue
        finite = [abs(v) for v in r if math.isfinite(v)]
        tol = atol * max(1.0, max(finite, default=0.0))
        bad, max_abs, max_rel = 0, 0.0, 0.0
        for a, b in zip(r, g):
            if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
                same = (math.isnan(a) and math.isnan(b)) or a == b
                bad += not same
                continue
            err = abs(a - b)
            max_abs = max(max_abs, err)
            max_rel = max(max_rel, err / abs(a) if a else 0.0)
            bad += err > tol + rtol * abs(a)
        if bad:
            lines.append("MISMATCH %s: max abs err %.3g, max rel err %.3g, %d "
                         "of %d elements outside tolerance (scaled to the "
                         "tensor)" % (name, max_abs, max_rel, bad, len(r)))
    return lines
