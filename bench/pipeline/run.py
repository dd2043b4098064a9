#!/usr/bin/env python3
"""Pipeline bubbles and memory, measured against the schedule's prediction.

For each schedule (gpipe, 1f1b, interleaved with 2 virtual stages, zb-h1) and
microbatch count, compiles a GPT with --pipeline, runs it with --trace, and
reads the runtime's own timestamps: the "pipeline" spans (one per schedule
action, named F<stage>.<microbatch>, B.., W.., BW..) of each step after the
first. Per step:

  measured bubble = 1 - (time ranks spend in actions) / (ranks x makespan)

where the makespan runs from the first action's start to the last action's
end over all ranks (the optimizer update is not part of the schedule). It
prints the measured bubble (median over steps) next to the schedule's
predictions: with unit costs (F = B = W = 1, what --tessel-pipeline-report
shows; for GPipe and 1F1B that is (p-1)/(m+p-1)), and with the costs
measured in the same run (the median F, B, W span; a fused BW counts as
B + W), simulated by --tessel-pipeline-report{costs=F,B,W}. It also prints
the runtime's peak buffer bytes on rank 0 (the summary line).

Usage: bench/pipeline/run.py [--build build] [--steps 6] [--ranks 2]
       [--microbatches 4,8] [--layers 4 --hidden 256 --seq 64 --batch 4]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

SCHEDULES = [("gpipe", ""), ("1f1b", ""), ("interleaved", "virtual=2"),
             ("zb-h1", "")]


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), out.stderr[-2000:]))
    return out.stdout + out.stderr


def spans(trace_path):
    """{step: {rank: [(name, start, end)]}} of the pipeline spans."""
    events = json.load(open(trace_path))["traceEvents"]
    steps = {}
    for e in events:
        if e.get("cat") == "step":
            k = int(e["name"].split()[1])
            steps.setdefault(k, []).append((e["tid"], e["ts"], e["ts"] + e["dur"]))
    result = {}
    for e in events:
        if e.get("cat") != "pipeline" or e["name"] == "optimizer":
            continue
        for k, windows in steps.items():
            if any(t == e["tid"] and a <= e["ts"] <= b for t, a, b in windows):
                result.setdefault(k, {}).setdefault(e["tid"], []).append(
                    (e["name"], e["ts"], e["ts"] + e["dur"]))
    return result


def measure(per_rank):
    starts = [s for r in per_rank.values() for _, s, _ in r]
    ends = [e for r in per_rank.values() for _, _, e in r]
    busy = sum(e - s for r in per_rank.values() for _, s, e in r)
    return 1 - busy / (len(per_rank) * (max(ends) - min(starts)))


def costs(steps):
    """Median F, B, W durations over the measured steps."""
    kinds = {"F": [], "B": [], "W": [], "BW": []}
    for per_rank in steps:
        for actions in per_rank.values():
            for name, s, e in actions:
                kinds[re.match(r"[A-Z]+", name).group(0)].append(e - s)
    f = statistics.median(kinds["F"])
    if kinds["BW"]:
        half = statistics.median(kinds["BW"]) / 2
        return f, half, half
    return f, statistics.median(kinds["B"]), statistics.median(kinds["W"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--microbatches", default="4,8")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()
    bin_dir = os.path.abspath(os.path.join(a.build, "bin"))
    base = os.environ.get("TESSEL_BENCH_DIR", os.environ.get("TMPDIR", "/tmp"))
    os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tessel-pipeline.", dir=base)
    try:
        model = os.path.join(work, "gpt.mlir")
        run([bin_dir + "/tessel-models", "gpt", "--layers", str(a.layers),
             "--hidden", str(a.hidden), "--heads", "4", "--vocab", "256",
             "--seq", str(a.seq), "--batch", str(a.batch), "--mesh",
             "pp=%d" % a.ranks, "-o", model])
        print("| schedule | m | measured bubble | predicted (F=B=W=1) | "
              "predicted (measured costs) | costs F/B/W ms | peak MiB rank 0 |")
        print("|---|---|---|---|---|---|---|")
        for m in [int(x) for x in a.microbatches.split(",")]:
            for schedule, extra in SCHEDULES:
                row(a, bin_dir, work, model, schedule, extra, m)
    finally:
        shutil.rmtree(work)


def row(a, bin_dir, work, model, schedule, extra, m):
    spec = "schedule=%s microbatches=%d %s" % (schedule, m, extra)
    exe = os.path.join(work, "step")
    local = os.path.join(work, "local.mlir")
    run([bin_dir + "/tessel-compile", model, "--optimizer", "sgd lr=0.01",
         "--pipeline", spec, "-o", exe])
    run([bin_dir + "/tessel-compile", model, "--optimizer", "sgd lr=0.01",
         "--pipeline", spec, "--emit", "local", "-o", local])
    trace = os.path.join(work, "trace.json")
    summary = run([bin_dir + "/tessel-run", exe, "--steps", str(a.steps), "--trace", trace])
    peak = re.search(r"peak buffers ([0-9.]+) MiB", summary).group(1)
    measured = spans(trace)
    steps = [measured[k] for k in sorted(measured) if k > 0]
    bubble = statistics.median(measure(s) for s in steps)
    f, b, w = costs(steps)
    report = json.loads(run([bin_dir + "/tessel-opt", local,
                             "--tessel-pipeline-report=format=json costs=%g,%g,%g"
                             % (f, b, w), "-o", os.devnull]))
    print("| %s | %d | %.3f | %.3f | %.3f | %.2f/%.2f/%.2f | %s |" % (
        schedule + (" v=2" if extra else ""), m, bubble, report["bubble"],
        report["bubble_with_costs"], f / 1e3, b / 1e3, w / 1e3, peak),
        flush=True)


if __name__ == "__main__":
    main()
