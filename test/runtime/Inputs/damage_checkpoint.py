#!/usr/bin/env python3
"""Writes a damaged copy of a checkpoint's model.safetensors for the error
tests: `truncate` cuts the file in half, `drop NAME` removes a tensor,
`f64 NAME` stores it as float64, `reshape NAME` adds a dimension of 1."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

path, how = sys.argv[1], sys.argv[2]
if how == "truncate":
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    sys.exit(0)
name = sys.argv[3]
tensors = safetensors_io.read_arrays(path)
if how == "drop":
    del tensors[name]
elif how == "f64":
    tensors[name] = np.asarray(tensors[name], dtype=np.float64)
elif how == "reshape":
    tensors[name] = np.asarray(tensors[name])[None]
safetensors_io.write_safetensors(path, tensors)
