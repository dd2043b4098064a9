#!/usr/bin/env python3
"""Compiled executables against the reference interpreter.

For each case: build a model with tessel-models, run its training step for
N steps in tessel-interp on one device (the reference), compile it with
tessel-compile for the case's mesh and rules, run the executable for N steps
(ranks as threads, or under mpirun with --mpi), and compare the losses of
every step and every result of the last step (new parameters, optimizer
state, loss, grad_norm) saved with --save.

Prints one PASS/FAIL line per case and a summary line.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

GPT = ["gpt", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab",
       "96", "--seq", "16", "--batch", "4"]
LLAMA = ["llama", "--layers", "2", "--hidden", "64", "--heads", "4",
         "--kv-heads", "2", "--vocab", "96", "--seq", "16", "--batch", "4"]
MLP = ["mlp", "--widths", "24,48,10", "--batch", "8"]
MOE = ["moe", "--layers", "2", "--hidden", "32", "--heads", "4", "--experts",
       "4", "--top-k", "2", "--ffn", "48", "--vocab", "96", "--seq", "16",
       "--batch", "4"]

# name: (model, mesh, strategy)
CASES = {
    "mlp:1": (MLP, None, None),
    "mlp:dp2": (MLP, "dp=2", "dp"),
    "gpt:1": (GPT, None, None),
    "gpt:dp2xtp2": (GPT, "dp=2,tp=2", "dp-tp"),
    "gpt:tp2-sp": (GPT, "tp=2", "tp-sp"),
    "gpt:fsdp4": (GPT, "dp=4", "fsdp"),
    "gpt:zero1-dp2xtp2": (GPT, "dp=2,tp=2", "dp-tp-zero1"),
    "gpt:zero2-dp2xtp2": (GPT, "dp=2,tp=2", "dp-tp-zero2"),
    "gpt:tp3-uneven": (GPT, "tp=3", "tp"),
    "llama:1": (LLAMA, None, None),
    "llama:dp2xtp2": (LLAMA, "dp=2,tp=2", "dp-tp"),
    "moe:1": (MOE, None, None),
    "moe:ep2": (MOE, "ep=2", "ep"),
    "moe:dp2xep2": (MOE, "dp=2,ep=2", "dp-ep"),
    "moe:ep4": (MOE, "ep=4", "ep"),
    "moe:dp4-shared": (MOE, "dp=4", "dp-ep-shared"),
    "moe:ep2xtp2": (MOE, "ep=2,tp=2", "ep-tp"),
}

STEP = re.compile(r"^step (\d+): loss ([-0-9.eE+naninf]+)")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kw).stdout


def losses(text):
    return [float(m.group(2)) for m in map(STEP.match, text.splitlines()) if m]


def compare(name, ref, got, rtol, atol):
    problems = []
    for key, want in ref.items():
        if key not in got:
            problems.append(f"{key} missing")
            continue
        a = np.asarray(want, dtype=np.float64)
        b = np.asarray(got[key], dtype=np.float64)
        if a.shape != b.shape:
            problems.append(f"{key} shape {b.shape} != {a.shape}")
            continue
        bad = np.abs(a - b) > atol + rtol * np.abs(a)
        if bad.any():
            problems.append(f"{key}: {int(bad.sum())} of {a.size} elements "
                            f"differ, max abs err {np.max(np.abs(a - b)):.3g}")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--only", default="", help="comma-separated case regexes")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--optimizer", default="adamw lr=3e-3 epsilon=1e-3 "
                   "clip-norm=1.0 weight-decay=0.1 warmup=2 total-steps=10")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--mpi", action="store_true",
                   help="run the executables under mpirun")
    p.add_argument("--data", default="", help="token file for both")
    p.add_argument("--cpu", default="", help="tessel-compile --cpu")
    p.add_argument("--compile-flag", action="append", default=[],
                   help="another tessel-compile flag (repeatable)")
    p.add_argument("--model-flag", action="append", default=[],
                   help="another tessel-models flag (repeatable)")
    args = p.parse_args()
    tool = lambda t: os.path.join(args.bin, t)  # noqa: E731
    patterns = [re.compile(x) for x in args.only.split(",") if x]
    passed = failed = 0
    opt_name, _, opt_rest = args.optimizer.partition(" ")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (model, mesh, strategy) in CASES.items():
            if patterns and not any(r.fullmatch(name) for r in patterns):
                continue
            base = os.path.join(tmp, re.sub(r"\W", "_", name))
            try:
                run([tool("tessel-models")] + model + args.model_flag +
                    ["-o", base + ".mlir"])
                run([tool("tessel-opt"), base + ".mlir",
                     f"--tessel-train-step=optimizer={opt_name} {opt_rest}",
                     "-o", base + ".step.mlir"])
                data = ["--tokens", args.data] if args.data else []
                ref_out = run([tool("tessel-interp"), base + ".step.mlir",
                               "--func", "train_step", "--train-steps",
                               str(args.steps), "--save", base + ".ref.st"]
                              + data)
                cmd = [tool("tessel-compile"), base + ".mlir", "--optimizer",
                       args.optimizer, "-o", base + ".exe"]
                if args.cpu:
                    cmd += ["--cpu", args.cpu]
                cmd += args.compile_flag
                if mesh:
                    cmd += ["--mesh", mesh, "--strategy", strategy]
                run(cmd)
                exe = [base + ".exe", "--steps", str(args.steps), "--save",
                       base + ".got.st"] + (["--data", args.data]
                                            if args.data else [])
                if args.mpi:
                    ranks = 1
                    for part in (mesh or "x=1").split(","):
                        ranks *= int(part.split("=")[1])
                    exe = ["mpirun", "--allow-run-as-root", "--oversubscribe",
                           "-np", str(ranks)] + exe
                got_out = run(exe)
            except subprocess.CalledProcessError as e:
                print(f"FAIL {name}: {' '.join(e.cmd)}\n{e.stderr}")
                failed += 1
                continue
            want, got = losses(ref_out), losses(got_out)
            problems = []
            if len(want) != args.steps or len(got) != args.steps:
                problems.append(f"expected {args.steps} losses, reference "
                                f"printed {len(want)}, executable {len(got)}")
            elif not np.allclose(got, want, rtol=args.rtol, atol=args.atol):
                problems.append(f"losses {got} != reference {want}")
            problems += compare(name, safetensors_io.read_arrays(
                base + ".ref.st"), safetensors_io.read_arrays(
                base + ".got.st"), args.rtol, args.atol)
            if problems:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(problems[:5]))
            else:
                passed += 1
                print(f"PASS {name}: losses {want[0]:.6f} -> {want[-1]:.6f}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
