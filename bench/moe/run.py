#!/usr/bin/env python3
"""Load balancing of the experts model with and without the auxiliary loss.

Trains the same Mixtral-shaped model (tessel-models moe) on dp=2 x ep=2
(4 ranks as threads) for --steps steps on the demo text, once with
--aux-loss 0.01 and once with --aux-loss 0, and reports, from the runtime's
--metrics file, the loss and the coefficient of variation (std / mean) of
tokens per expert in each MoE layer, averaged over the last 10 printed
steps. A balanced router gives CV 0.

Usage: run.py [--bin build/bin] [--steps 300]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODEL = ("moe --layers 4 --hidden 256 --heads 4 --experts 8 --top-k 2 "
         "--ffn 512 --capacity-factor 1.25 --z-loss 0.001 --vocab 256 "
         "--seq 64 --batch 16")


def train(o, tmp, aux):
    tool = lambda t: os.path.join(o.bin, t)  # noqa: E731
    base = os.path.join(tmp, "aux%s" % aux)
    subprocess.run([tool("tessel-models")] + MODEL.split() +
                   ["--aux-loss", str(aux), "-o", base + ".mlir"], check=True)
    subprocess.run([tool("tessel-compile"), base + ".mlir", "--mesh",
                    "dp=2,ep=2", "--strategy", "dp-ep", "--optimizer",
                    "adamw lr=3e-3 warmup=20 total-steps=%d clip-norm=1.0"
                    % o.steps, "-o", base], check=True)
    subprocess.run([tool("tessel-run"), "-n", "4", base, "--steps",
                    str(o.steps), "--data", o.data, "--print-every", "10",
                    "--metrics", base + ".jsonl"], check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(l) for l in open(base + ".jsonl")]
    rows = [r for r in rows if "expert_load" in r][-10:]
    experts = 8
    cvs = []
    for r in rows:
        load = r["expert_load"]
        layers = [load[i:i + experts] for i in range(0, len(load), experts)]
        cvs.append([statistics.pstdev(l) / statistics.mean(l)
                    for l in layers])
    per_layer = [statistics.mean(c[i] for c in cvs)
                 for i in range(len(cvs[0]))]
    return rows[-1], per_layer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--data", default="")
    o = p.parse_args()
    base = os.environ.get("TESSEL_BENCH_DIR") or tempfile.gettempdir()
    tmp = tempfile.mkdtemp(prefix="tessel-moe-", dir=base)
    try:
        if not o.data:
            o.data = os.path.join(tmp, "train.bin")
            subprocess.run([os.path.join(o.bin, "tessel-tokenize"),
                            os.path.join(ROOT, "data", "kjv",
                                         "genesis-exodus.txt"),
                            "-o", o.data], check=True,
                           stdout=subprocess.DEVNULL)
        print("| --aux-loss | lm_loss | aux_loss | dropped | CV per layer "
              "(last 10 prints) | mean CV |")
        print("|---|---|---|---|---|---|")
        for aux in (0.01, 0):
            last, cv = train(o, tmp, aux)
            print("| %s | %.3f | %.3f | %d | %s | %.3f |" % (
                aux, last["lm_loss"], last["aux_loss"],
                last["dropped_tokens"], " ".join("%.3f" % c for c in cv),
                statistics.mean(cv)))
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
