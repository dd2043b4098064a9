#!/usr/bin/env python3
"""Generates models over a range of configurations and checks that each one
verifies (tessel-opt), runs (tessel-interp), and that a causal LM's loss at
initialization is close to ln(vocab): with small initial weights the logits
are nearly uniform."""
import argparse
import math
import re
import subprocess
import sys

CONFIGS = [
    # (model, extra flags, vocab or None when the loss is not an LM loss)
    ("gpt", "--layers 2 --hidden 128 --heads 4 --vocab 256 --seq 64 --batch 4", 256),
    ("gpt", "--layers 1 --hidden 32 --heads 2 --vocab 1000 --seq 8 --batch 2", 1000),
    ("gpt", "--layers 3 --hidden 48 --heads 3 --vocab 97 --seq 16 --batch 1 --tied no", 97),
    ("gpt", "--layers 1 --hidden 32 --heads 4 --vocab 128 --seq 8 --batch 2 --dtype bf16", 128),
    ("gpt", "--layers 1 --hidden 16 --heads 2 --vocab 64 --seq 4 --batch 2 --dtype f64", 64),
    ("gpt", "--layers 1 --hidden 16 --heads 2 --vocab 64 --seq 4 --batch 2 --dtype f16", 64),
    ("llama", "--layers 2 --hidden 64 --heads 4 --vocab 256 --seq 16 --batch 2", 256),
    ("llama", "--layers 2 --hidden 64 --heads 4 --kv-heads 2 --vocab 256 --seq 16 --batch 2", 256),
    ("llama", "--layers 1 --hidden 64 --heads 8 --kv-heads 1 --vocab 50 --seq 8 --batch 3 --tied yes", 50),
    ("llama", "--layers 1 --hidden 32 --heads 2 --vocab 128 --seq 8 --batch 2 --dtype bf16 --ffn 64", 128),
    ("mlp", "--widths 16,32,10 --batch 8", None),
    ("mlp", "--layers 3 --hidden 8 --vocab 5 --batch 4", None),
    ("mlp", "--widths 16,32,16 --loss mse --batch 8", None),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", required=True)
    p.add_argument("--opt", required=True)
    p.add_argument("--interp", required=True)
    opts = p.parse_args()
    passed = failed = 0
    for model, flags, vocab in CONFIGS:
        label = "%s %s" % (model, flags)
        gen = subprocess.run([opts.models, model] + flags.split(),
                             capture_output=True, text=True)
        if gen.returncode:
            print("FAIL %s: tessel-models: %s" % (label, gen.stderr))
            failed += 1
            continue
        ver = subprocess.run([opts.opt, "-"], input=gen.stdout,
                             capture_output=True, text=True)
        run = subprocess.run([opts.interp, "-", "--print"], input=gen.stdout,
                             capture_output=True, text=True)
        m = re.search(r"^loss: \w+\[\] = (\S+)", run.stdout, re.M)
        if ver.returncode or run.returncode or not m:
            print("FAIL %s: %s%s" % (label, ver.stderr, run.stderr))
            failed += 1
            continue
        loss = float(m.group(1))
        ok = math.isfinite(loss) and loss > 0
        if vocab is not None:
            ok = ok and abs(loss - math.log(vocab)) < 0.15
        print("%s %s: loss %.4f%s" % ("ok" if ok else "FAIL", label, loss,
                                       "" if vocab is None else
                                       " (ln %d = %.4f)" % (vocab,
                                                            math.log(vocab))))
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
