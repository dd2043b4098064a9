"""Hugging Face files without Tessel, for the reference scripts
(gpt2_reference.py, llama_reference.py): a safetensors writer, a reader of
files and sharded directories, token batches and the cross-entropy."""
import json
import os
import struct

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_model(path):
    """The tensors of a safetensors file or of a directory's shards (its
    model.safetensors.index.json), as float64 arrays."""
    files = [path]
    if os.path.isdir(path):
        index = json.load(open(os.path.join(path, "model.safetensors.index.json")))
        files = [os.path.join(path, f)
                 for f in sorted(set(index["weight_map"].values()))]
    out = {}
    for f in files:
        data = open(f, "rb").read()
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
        for name, t in header.items():
            if name == "__metadata__":
                continue
            assert t["dtype"] == "F32", (name, t["dtype"])
            b, e = t["data_offsets"]
            out[name] = np.frombuffer(data[8 + n + b:8 + n + e], dtype="<f4") \
                .reshape(t["shape"]).astype(np.float64)
    return out


def batch0(path, batch, seq):
    """Step 0's batch of a token file: row b is the seq tokens from b * seq,
    its labels one further."""
    stream = np.fromfile(path, dtype="<u2").astype(np.int64)
    rows = [stream[b * seq: b * seq + seq + 1] for b in range(batch)]
    return np.array([r[:-1] for r in rows]), np.array([r[1:] for r in rows])


def mean_ce(logits, labels):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, labels[..., None], -1).mean()
