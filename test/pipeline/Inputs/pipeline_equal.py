#!/usr/bin/env python3
"""Trains a model pipelined and unpipelined and compares them.

For each configuration MODEL:MESH:STRATEGY:SCHEDULE:M[:VIRTUAL[:LAYERS]],
compiles the model generated on MESH (which has a "pp" axis) with
tessel-compile --pipeline "schedule=SCHEDULE microbatches=M virtual=VIRTUAL"
and the same model for one device with --accumulate, runs both for --steps
steps on the same token file (the reference with --batch-size M*b, so its
micro-steps are the pipeline's microbatches), and prints one line: the losses
of every step and every parameter and optimizer state after the last step
must agree (within TOLERANCES below; the two sum in other orders). --mpi runs the
pipelined program under mpirun instead of as threads."""
import argparse
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "lib"))
import numpy as np  # noqa: E402
import safetensors_io  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--bin", required=True)
p.add_argument("--work", required=True)
p.add_argument("--tokens", required=True)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--batch", type=int, default=2)
# GPT's key biases have a zero gradient in exact arithmetic (softmax ignores
# a shift of a row), so AdamW turns their rounding noise into full steps in a
# direction the summation order picks: GPT trains with SGD (momentum,
# clipping), Llama (no biases) with AdamW.
OPTIMIZERS = {"gpt": "sgd lr=0.1 momentum=0.9 clip-norm=0.5",
              "llama": "adamw lr=1e-2 clip-norm=0.5",
              # An expert that few tokens reach has gradients near zero,
              # whose rounding AdamW would scale to full steps: a larger
              # epsilon keeps the comparison well conditioned.
              "moe": "adamw lr=1e-2 epsilon=1e-3 clip-norm=0.5"}
# Tolerances of the existing equality tests (docs/autodiff.md): SGD 1e-5;
# AdamW 1e-4 relative, 1e-5 absolute, since it divides tiny gradients by
# their own root mean square and so scales their rounding differences up.
TOLERANCES = {"gpt": (1e-5, 1e-6), "llama": (1e-4, 1e-5),
              "moe": (1e-4, 1e-5)}
p.add_argument("--mpi", default="")
p.add_argument("--optimizer", default="",
               help="for every model instead of OPTIMIZERS (tolerances "
               "stay the model's)")
p.add_argument("--model-flag", action="append", default=[],
               help="another tessel-models flag (repeatable)")
p.add_argument("configs", nargs="+")
args = p.parse_args()


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def worst(got, ref, name):
    """How far the worst elements of `got` are from `ref`."""
    got = np.asarray(got, np.float64).ravel()
    ref = np.asarray(ref, np.float64).ravel()
    rtol, atol = TOLERANCES[name]
    off = np.abs(got - ref) > atol + rtol * np.abs(ref)
    i = int(np.argmax(np.abs(got - ref)))
    return (f"{int(off.sum())} of {got.size} elements outside, worst "
            f"{got[i]:.9g} vs {ref[i]:.9g} (max |ref| {np.abs(ref).max():.3g})")


def losses(text):
    return [float(l.split("loss ")[1].split(",")[0]) for l in text.splitlines()
            if l.startswith("step ") and "loss " in l]


def metrics(text):
    """Per printed step, the metrics after grad_norm (name -> values): the
    micro-steps' mean, which a pipeline and an accumulating step agree on
    (their saved values are the last micro-step's and the microbatches'
    mean, so those are not compared)."""
    out = []
    for l in text.splitlines():
        if not l.startswith("step "):
            continue
        found = {}
        for part in l.split(", ")[2:]:
            name, _, value = part.partition(" ")
            if "ms/step" in part or "tokens/s" in part:
                continue
            found[name] = [float(v) for v in value.strip("[]").split()]
        out.append(found)
    return out


def model(name, layers, mesh, strategy, out):
    cmd = [os.path.join(args.bin, "tessel-models"), name, "--layers", str(layers),
           "--hidden", "16", "--heads", "2", "--vocab", "32", "--seq", "8",
           "--batch", str(args.batch), "-o", out] + args.model_flag
    if mesh:
        cmd += ["--mesh", mesh]
    if strategy != "none":
        cmd += ["--strategy", strategy]
    run(cmd)


refs = {}
for config in args.configs:
    parts = config.split(":")
    name, mesh, strategy, schedule, m = parts[:5]
    virtual = parts[5] if len(parts) > 5 else "1"
    layers = int(parts[6]) if len(parts) > 6 else 4
    m = int(m)
    tag = config.replace(":", "_").replace(",", "_").replace("=", "")
    work = os.path.join(args.work, tag)
    os.makedirs(work, exist_ok=True)
    key = (name, layers, m)
    if key not in refs:
        rdir = os.path.join(args.work, f"ref_{name}_{layers}_{m}")
        os.makedirs(rdir, exist_ok=True)
        model(name, layers, "", "none", f"{rdir}/m.mlir")
        run([os.path.join(args.bin, "tessel-compile"), f"{rdir}/m.mlir",
             "--optimizer", args.optimizer or OPTIMIZERS[name], "--accumulate", "-o", f"{rdir}/ref"])
        out = run([f"{rdir}/ref", "--steps", str(args.steps), "--batch-size",
                   str(m * args.batch), "--data", args.tokens,
                   "--save", f"{rdir}/ref.st"])
        refs[key] = (losses(out), safetensors_io.read_arrays(f"{rdir}/ref.st"),
                     metrics(out))
    ref_losses, ref_tensors, ref_metrics = refs[key]
    model(name, layers, mesh, strategy, f"{work}/m.mlir")
    run([os.path.join(args.bin, "tessel-compile"), f"{work}/m.mlir",
         "--optimizer", args.optimizer or OPTIMIZERS[name], "--pipeline",
         f"schedule={schedule} microbatches={m} virtual={virtual}",
         "-o", f"{work}/pp"])
    cmd = [f"{work}/pp", "--steps", str(args.steps), "--data", args.tokens,
           "--save", f"{work}/pp.st"]
    if args.mpi:
        ranks = 1
        for axis in mesh.split(","):
            ranks *= int(axis.split("=")[1])
        cmd = args.mpi.split() + ["-np", str(ranks)] + cmd
    out = run(cmd)
    got_losses, got_metrics = losses(out), metrics(out)
    metric_names = {n for step in got_metrics for n in step}
    got = {n: v for n, v in safetensors_io.read_arrays(f"{work}/pp.st").items()
           if n not in metric_names}
    same_metrics = len(got_metrics) == len(ref_metrics) and all(
        g.keys() == r.keys() and all(np.allclose(g[n], r[n], rtol=1e-4,
                                                 atol=1e-5) for n in g)
        for g, r in zip(got_metrics, ref_metrics))
    bad = [n for n in got if n != "loss" and n in ref_tensors and not np.allclose(
        np.asarray(got[n], np.float64), np.asarray(ref_tensors[n], np.float64),
        rtol=TOLERANCES[name][0], atol=TOLERANCES[name][1])]
    compared = sum(1 for n in got if n != "loss" and n in ref_tensors)
    missing = [n for n in got if n not in ref_tensors]
    same_losses = len(got_losses) == len(ref_losses) and np.allclose(
        got_losses, ref_losses, rtol=1e-5, atol=0)
    ok = (not bad and not missing and same_losses and same_metrics and
          compared > 0)
    print(f"{'equal' if ok else 'MISMATCH'} {config}: "
          f"{len(got_losses)} losses {'equal' if same_losses else 'differ'}, "
          + (f"metrics {'equal' if same_metrics else 'differ'}, "
             if metric_names else "")
          + f"{compared} tensors compared, {len(bad)} differ"
          + (f" ({', '.join(bad[:4])})" if bad else "")
          + "".join(f"; {n}: {worst(got[n], ref_tensors[n], name)}"
                    for n in bad[:2])
          + (f", not in the reference: {', '.join(missing[:4])}" if missing else ""))
