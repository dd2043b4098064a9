#!/usr/bin/env python3
"""Compares the `step N: loss L[, grad_norm G]` lines of two program outputs
within a relative tolerance; prints one line. For runs that compute the same
numbers in a different order (so the last bits may differ by CPU)."""
import argparse
import re
import sys

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--rtol", type=float, required=True)
args = p.parse_args()
LINE = re.compile(r"^step (\d+): loss ([-0-9.eE+naninf]+)(?:, grad_norm ([-0-9.eE+naninf]+))?", re.M)


def read(path):
    return {int(m[0]): [float(x) for x in m[1:] if x] for m in LINE.findall(open(path).read())}


a, b = read(args.a), read(args.b)
if not a or sorted(a) != sorted(b):
    print(f"steps differ: {sorted(a)} vs {sorted(b)}")
    sys.exit(1)
bad = [(s, x, y) for s in a for x, y in zip(a[s], b[s])
       if abs(x - y) > args.rtol * max(abs(x), abs(y))]
print(f"{len(a)} steps compared, {len(bad)} differ" +
      (f": step {bad[0][0]} {bad[0][1]} vs {bad[0][2]}" if bad else ""))
sys.exit(1 if bad else 0)
