#!/usr/bin/env python3
"""Writes a Tessel checkpoint's parameters with Hugging Face Mixtral's names:
each stacked `...experts.wN.weight` [E, ...] as E tensors
`...experts.K.wN.weight` (optimizer state and outputs dropped).

Usage: split_experts.py IN.safetensors OUT.safetensors [--drop NAME]
       [--extra NAME=FROM]   (drop a tensor / add a copy of FROM as NAME)
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from safetensors_io import read_arrays, write_safetensors  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--drop", action="append", default=[])
    p.add_argument("--extra", action="append", default=[])
    o = p.parse_args()
    out = {}
    for name, value in read_arrays(o.src).items():
        if name.startswith("adamw.") or value.ndim == 0 or \
                not name.endswith(".weight"):
            continue
        m = re.fullmatch(r"(.*\.experts)\.(w[123]\.weight)", name)
        if not m:
            out[name] = value
            continue
        for k in range(value.shape[0]):
            out["%s.%d.%s" % (m.group(1), k, m.group(2))] = value[k]
    for name in o.drop:
        del out[name]
    for pair in o.extra:
        name, source = pair.split("=")
        out[name] = out[source]
    write_safetensors(o.dst, out)


if __name__ == "__main__":
    main()
