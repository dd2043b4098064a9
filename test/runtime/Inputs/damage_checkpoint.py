#!/usr/bin/env python3
"""Damages a copy of a checkpoint step for the error tests.

damage_checkpoint.py STEP_DIR HOW [NAME]: `truncate` cuts the first shard
in half, `drop NAME` removes a tensor, `f64 NAME` stores it as float64,
`reshape NAME` adds a dimension of 1 (in the shard the index names for it).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

step, how = sys.argv[1], sys.argv[2]
index = json.load(open(os.path.join(step, "model.safetensors.index.json")))
weight_map = index["weight_map"]
if how == "truncate":
    path = os.path.join(step, sorted(set(weight_map.values()))[0])
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    sys.exit(0)
name = sys.argv[3]
path = os.path.join(step, weight_map[name])
tensors = safetensors_io.read_arrays(path)
if how == "drop":
    del tensors[name]
elif how == "f64":
    tensors[name] = np.asarray(tensors[name], dtype=np.float64)
elif how == "reshape":
    tensors[name] = np.asarray(tensors[name])[None]
safetensors_io.write_safetensors(path, tensors)
