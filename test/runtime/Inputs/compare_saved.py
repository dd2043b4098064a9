#!/usr/bin/env python3
"""Compares two safetensors files saved by compiled programs (--save) on the
tensors both have, except those named with --skip; prints one line."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--rtol", type=float, default=1e-4)
p.add_argument("--atol", type=float, default=1e-5)
p.add_argument("--skip", action="append", default=[])
args = p.parse_args()
a = safetensors_io.read_arrays(args.a)
b = safetensors_io.read_arrays(args.b)
names = [n for n in b if n in a and n not in args.skip]
bad = []
for n in names:
    x = np.asarray(a[n], dtype=np.float64)
    y = np.asarray(b[n], dtype=np.float64)
    if x.shape != y.shape or np.any(np.abs(x - y) > args.atol + args.rtol * np.abs(y)):
        bad.append(n)
print(f"{len(names)} tensors compared, {len(bad)} differ" +
      (": " + ", ".join(bad[:5]) if bad else ""))
