#!/usr/bin/env python3
"""Checks a sharded checkpoint step against its index.

check_shards.py STEP_DIR SHARDS: the index names SHARDS files
(model-0000k-of-0000n), every file holds exactly the tensors the index maps
to it, total_size is the sum of their bytes, and the shards are balanced
(each at most total / SHARDS plus the largest tensor: the bound of
largest-first placement on the least loaded rank). Prints "shards ok".
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import safetensors_io  # noqa: E402

step, shards = sys.argv[1], int(sys.argv[2])
index = json.load(open(os.path.join(step, "model.safetensors.index.json")))
weight_map = index["weight_map"]
files = sorted(set(weight_map.values()))
want = [f"model-{k + 1:05d}-of-{shards:05d}.safetensors" for k in range(shards)]
assert files == want, (files, want)
total, largest, per_file = 0, 0, {}
for f in files:
    arrays = safetensors_io.read_arrays(os.path.join(step, f))
    mapped = {t for t, g in weight_map.items() if g == f}
    assert set(arrays) == mapped, (f, set(arrays) ^ mapped)
    size = sum(a.nbytes for a in arrays.values())
    largest = max([largest] + [a.nbytes for a in arrays.values()])
    per_file[f] = size
    total += size
assert index["metadata"]["total_size"] == total, (index["metadata"], total)
bound = total / shards + largest
assert max(per_file.values()) <= bound, (per_file, bound)
print("shards ok")
