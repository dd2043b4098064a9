"""safetensors files and bf16 rounding for the Python test drivers.

Shared by test/interpreter/*_check.py, test/autodiff/*_check.py. Arrays are
numpy; BF16(values) marks float values to be written as bf16.
"""
import json
import struct

import numpy as np


NP_OF = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
         "I32": np.int32, "I64": np.int64, "BOOL": np.bool_}
ST_OF = {np.dtype(v): k for k, v in NP_OF.items()}


class BF16:
    """Marks a float array (already exactly representable) as bf16."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float32)


def bf16_bits(x):
    """float32 -> bf16 bits, rounding to nearest even (NaN stays NaN)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def bf16(x):
    """Rounds float32 values to bf16 (nearest even) by bit manipulation."""
    return bf16_to_f32(bf16_bits(np.asarray(x, dtype=np.float32)))


BF16_MAX = (2.0 - 2.0**-7) * 2.0**127


def bf16_exact(x):
    """Rounds float64 values straight to bf16 (nearest even), no double
    rounding through f32: keep 8 significant bits (bf16 subnormals step
    2^-133), overflow to inf."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        e = np.maximum(e, -125)
        q = np.ldexp(np.round(np.ldexp(x, 8 - e)), e - 8)
        q = np.where(np.abs(q) > BF16_MAX, np.copysign(np.inf, x), q)
    return q.astype(np.float32)


def write_raw(path, tensors):
    """Writes {name: (safetensors dtype, shape, little-endian bytes)}."""
    header, blobs, off = {}, [], 0
    for name, (dt, shape, raw) in tensors.items():
        header[name] = {"dtype": dt, "shape": list(shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_safetensors(path, tensors):
    raw = {}
    for name, val in tensors.items():
        if isinstance(val, BF16):
            dt, data = "BF16", bf16_bits(val.values).astype("<u2")
            shape = val.values.shape
        else:
            arr = np.asarray(val)
            dt = ST_OF[arr.dtype]
            data, shape = arr.astype(arr.dtype.newbyteorder("<")), arr.shape
        raw[name] = (dt, shape, np.ascontiguousarray(data).tobytes())
    write_raw(path, raw)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt, shape = info["dtype"], info["shape"]
        if dt == "BF16":
            arr = bf16_to_f32(np.frombuffer(body[b:e], dtype="<u2"))
        else:
            arr = np.frombuffer(body[b:e],
                                dtype=np.dtype(NP_OF[dt]).newbyteorder("<"))
            arr = arr.astype(NP_OF[dt])
        out[name] = (dt, arr.reshape(shape))
    return out


def read_arrays(path):
    """read_safetensors without the dtype names: {name: array}."""
    return {name: arr for name, (_, arr) in read_safetensors(path).items()}
