#!/usr/bin/env python3
"""--tessel-logits against the forward it comes from.

Runs MODEL's @forward (the loss) and @forward_logits (made by
--tessel-logits) in the interpreter on the same parameters (generated from
the same seed) and the same random tokens and labels, then computes the
mean cross-entropy of the logits in numpy (float64, log-sum-exp): it must
equal the forward's loss (its language-model loss, `lm_loss`, where the
forward adds auxiliary losses). Prints one line: "logits: loss X, numpy Y, ok".
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--bin", required=True)
p.add_argument("--model", required=True)
p.add_argument("--work", required=True)
p.add_argument("--batch", type=int, required=True)
p.add_argument("--seq", type=int, required=True)
p.add_argument("--vocab", type=int, required=True)
args = p.parse_args()
tool = lambda t: os.path.join(args.bin, t)  # noqa: E731

rng = np.random.default_rng(7)
ids = rng.integers(0, args.vocab, (args.batch, args.seq)).astype(np.int32)
labels = rng.integers(0, args.vocab, (args.batch, args.seq)).astype(np.int32)
data = os.path.join(args.work, "data.safetensors")
safetensors_io.write_safetensors(data, {"input_ids": ids, "labels": labels})
with_logits = os.path.join(args.work, "logits.mlir")
subprocess.run([tool("tessel-opt"), args.model, "--tessel-logits",
                "-o", with_logits], check=True)
outs = {}
for func in ("forward", "forward_logits"):
    out = os.path.join(args.work, func + ".safetensors")
    subprocess.run([tool("tessel-interp"), with_logits, "--func", func,
                    "--inputs", data, "--save", out], check=True,
                   capture_output=True)
    outs[func] = safetensors_io.read_arrays(out)
# Experts add auxiliary losses to `loss`; their cross-entropy is `lm_loss`.
loss = float(outs["forward"].get("lm_loss", outs["forward"]["loss"]))
logits = outs["forward_logits"]["logits"].astype(np.float64)
top = logits.max(axis=-1, keepdims=True)
lse = np.log(np.exp(logits - top).sum(axis=-1)) + top[..., 0]
picked = np.take_along_axis(logits, labels[..., None].astype(np.int64),
                            axis=-1)[..., 0]
ref = float((lse - picked).mean())
ok = abs(loss - ref) <= 1e-5 * abs(ref)
print(f"logits: loss {loss:.6f}, numpy {ref:.6f}, {'ok' if ok else 'DIFFER'}")
sys.exit(0 if ok else 1)
