#!/usr/bin/env python3
"""tessel-plan's predictions against measurements on this machine.

A small GPT on 4 ranks (threads of one process), trained in several
layouts: tessel-compile --plan compiles each layout and its executable
runs it, all of them in turn, five rounds (each layout keeps its fastest
round: this machine's neighbours only ever add time). A description of
this CPU is then calibrated from two of those runs (dp=R and tp=R): the
matmul rate the runtime measured in the dp run, and the memory bandwidth
of the other ops and the collectives' bandwidth that make both runs' step
times come out as measured. With it tessel-plan --evaluate predicts every
layout's per-rank memory and step time. Compares the predicted peak
memory per rank (tessel-plan's reading of the plan it compiles, and the
screen's equations) with the measured one (the runtime's peak buffers plus
the step's arguments, which it keeps apart) and ranks the step times.

  bench/plan/measure.py [--build build] [--ranks 4|2] [--rounds 5]
                        [--out bench/plan/results.json]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MODEL = ["gpt", "--layers", "4", "--hidden", "256", "--heads", "4",
         "--vocab", "1024", "--seq", "128"]
GLOBAL_BATCH = 16
RANKS = 4
# On 2 cores, 4 thread ranks share them (the description says so:
# compute_units_per_node); with 2 ranks each has a core, as each GPU has
# its own SMs. The first layout is dp=R, and tp=R is among them: the
# calibration uses both.
CONFIGS_2 = [
    "dp=2",
    "dp=2,zero=1",
    "dp=2,zero=3",
    "dp=2,recompute=layers",
    "dp=2,mb=2x4",
    "tp=2",
    "tp=2,sp=1",
    "pp=2,mb=4x4",
    "pp=2,mb=4x4,schedule=gpipe",
    "pp=2,mb=8x2,schedule=zb-h1",
]
CONFIGS = [
    "dp=4",
    "dp=4,zero=1",
    "dp=4,zero=3",
    "dp=4,recompute=layers",
    "dp=2,tp=2",
    "dp=2,tp=2,sp=1",
    "dp=2,tp=2,mb=2x4",
    "tp=4",
    "dp=2,pp=2,mb=4x2",
    "pp=4,mb=8x2",
]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout + r.stderr


def model(bin_, batch, path):
    run([os.path.join(bin_, "tessel-models")] + MODEL +
        ["--batch", str(batch), "-o", path])


def summary(text):
    ms = float(re.search(r"summary: ([0-9.]+) ms/step", text).group(1))
    peak = float(re.search(r"peak buffers ([0-9.]+) MiB on rank 0",
                           text).group(1))
    coll = re.search(r"in collectives ([0-9.]+)%", text)
    rate = re.search(r"([0-9.]+) GFLOP/s per rank", text)
    mm = re.search(r"time in matmuls ([0-9.]+)%", text)
    return {"ms": ms, "peak_buffers": peak * 2**20,
            "matmuls": float(mm.group(1)) / 100 if mm else 0,
            "collectives": float(coll.group(1)) / 100 if coll else 0,
            "gflops": float(rate.group(1)) if rate else 0}


def build(bin_, tmp, name, plan_json):
    """Compiles the plan; the executable's arguments and what the
    per-device program's reports say (its arguments' bytes)."""
    plan = json.load(open(plan_json))
    mlir = os.path.join(tmp, name + ".mlir")
    model(bin_, plan["model_batch"], mlir)
    exe = os.path.join(tmp, name)
    run([os.path.join(bin_, "tessel-compile"), mlir, "--plan", plan_json,
         "-o", exe])
    local = os.path.join(tmp, name + ".local.mlir")
    run([os.path.join(bin_, "tessel-compile"), mlir, "--plan", plan_json,
         "--emit", "local", "-o", local])
    report = json.loads(run([os.path.join(bin_, "tessel-opt"), local,
                             "--tessel-memory-report=format=json",
                             "-o", os.devnull]))
    steps_ = [f for f in report
              if re.fullmatch(r"train_step(_pp0)?", f["function"])]
    args = [exe, "--steps", "8", "--threads", "1"]
    if plan["accumulate"]:
        args += ["--batch-size", str(plan["global_batch"])]
    return {"args": args, "arguments": steps_[0]["argument_bytes"]}


def measure_all(builds, rounds):
    """Runs every build once per round, in turn (so that a slow spell of
    this machine falls on all of them); keeps each one's fastest run."""
    best = [None] * len(builds)
    for r in range(rounds):
        for i, b in enumerate(builds):
            s = summary(run(b["args"]))
            if best[i] is None or s["ms"] < best[i]["ms"]:
                best[i] = s
        print("round %d of %d done" % (r + 1, rounds), flush=True)
    for b, s in zip(builds, best):
        s["arguments"] = b["arguments"]
    return best


def plan_for(bin_, tmp, spec, hardware, name):
    """tessel-plan --evaluate on the model at the plan's batch (one
    microbatch of every replica), so that it also compiles the plan and
    reads its memory off the program (predicted.memory_bytes_compiled)."""
    mlir = os.path.join(tmp, "base.mlir")
    if not os.path.exists(mlir):
        model(bin_, 1, mlir)
    out = os.path.join(tmp, name + ".plan.json")
    args = ["--devices", str(RANKS), "--global-batch", str(GLOBAL_BATCH),
            "--gpu", hardware, "--evaluate", spec, "--emit", out]
    run([os.path.join(bin_, "tessel-plan"), mlir] + args)
    batch = json.load(open(out))["model_batch"]
    sized = os.path.join(tmp, name + ".model.mlir")
    model(bin_, batch, sized)
    run([os.path.join(bin_, "tessel-plan"), sized] + args)
    return out


def description(peak_tflops, memory_gbs, link_gbs, latency_us):
    return {"name": "this CPU, %d thread ranks" % RANKS, "memory_gib": 6,
            "peak_tflops": {"f32": peak_tflops}, "matmul_efficiency": 1.0,
            "overlap": 0.0, "devices_per_node": RANKS,
            "compute_units_per_node": len(os.sched_getaffinity(0)),
            "memory_bandwidth_gbytes_per_s": memory_gbs,
            "links": {k: {"bandwidth_gbytes_per_s": link_gbs,
                          "latency_us": latency_us}
                      for k in ("intra_node", "inter_node")}}


def predicted_seconds(bin_, tmp, spec, desc, name):
    hw = os.path.join(tmp, name + ".hw.json")
    json.dump(desc, open(hw, "w"))
    plan = json.load(open(plan_for(bin_, tmp, spec, hw, name)))
    return plan["predicted"]["step_seconds"]


LATENCY_US = 20
HUGE = 1e9


def calibrate(bin_, tmp, dp, tp):
    """This CPU as a hardware description, from the dp=R and tp=R runs
    (`dp`, `tp`: their measured summaries). The matmul rate is the dp
    run's (matmul FLOPs over the time the runtime spent in matmuls, while
    every rank computes); the model's step time is linear in the inverses
    of the memory and link bandwidths, whose coefficients tessel-plan gives
    with one bandwidth at 1 GB/s and everything else infinitely fast; the
    two runs' measured times then fix both."""
    rate = dp["gflops"] / dp["matmuls"] / 1000  # TFLOP/s per rank
    rows, rhs = [], []
    for spec, m in (("dp=%d" % RANKS, dp), ("tp=%d" % RANKS, tp)):
        key = spec.replace("=", "")
        known = predicted_seconds(bin_, tmp, spec,
                                  description(rate, 0, HUGE, LATENCY_US),
                                  "cal-%s-known" % key)
        per_memory = predicted_seconds(bin_, tmp, spec,
                                       description(HUGE, 1, HUGE, 0),
                                       "cal-%s-memory" % key)
        per_link = predicted_seconds(bin_, tmp, spec,
                                     description(HUGE, 0, 1, 0),
                                     "cal-%s-link" % key)
        rows.append((per_memory, per_link))
        rhs.append(m["ms"] / 1000 - known)
    (a, b), (c, d) = rows
    det = a * d - b * c
    inv_memory = (rhs[0] * d - b * rhs[1]) / det
    inv_link = (a * rhs[1] - c * rhs[0]) / det
    if det == 0 or inv_memory <= 0 or inv_link <= 0:
        sys.exit("calibration failed: the dp and tp runs (%.1f, %.1f ms) "
                 "leave no positive bandwidths (1/memory %g, 1/link %g); "
                 "run again on a quieter machine" %
                 (dp["ms"], tp["ms"], inv_memory, inv_link))
    desc = description(rate, 1 / inv_memory, 1 / inv_link, LATENCY_US)
    hw = os.path.join(tmp, "cpu.json")
    json.dump(desc, open(hw, "w"), indent=1)
    return hw, desc


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for pos, i in enumerate(order):
            r[i] = pos + 1
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="bench/plan/results.json")
    ap.add_argument("--ranks", type=int, default=4, choices=[2, 4])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    global RANKS
    RANKS = a.ranks
    configs = CONFIGS if RANKS == 4 else CONFIGS_2
    assert configs[0] == "dp=%d" % RANKS and "tp=%d" % RANKS in configs
    bin_ = os.path.join(a.build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        seed = os.path.join(tmp, "seed.json")
        json.dump(description(1, 1, 1, LATENCY_US), open(seed, "w"))
        builds = [build(bin_, tmp, "c%d" % i,
                        plan_for(bin_, tmp, spec, seed, "c%d" % i))
                  for i, spec in enumerate(configs)]
        measured = measure_all(builds, a.rounds)
        hw, desc = calibrate(bin_, tmp, measured[0],
                             measured[configs.index("tp=%d" % RANKS)])
        rows = []
        for i, (spec, m) in enumerate(zip(configs, measured)):
            plan = json.load(open(plan_for(bin_, tmp, spec, hw, "p%d" % i)))
            p = plan["predicted"]
            screen = sum(p["memory_bytes"].values())
            # The runtime reports rank 0, which runs pipeline stage 0.
            predicted = (p.get("memory_bytes_compiled_by_stage") or
                         [p.get("memory_bytes_compiled") or screen])[0]
            measured_bytes = m["arguments"] + m["peak_buffers"]
            rows.append({"plan": plan["plan"], "evaluate": spec,
                         "predicted_bytes": predicted,
                         "screen_bytes": screen,
                         "measured_bytes": measured_bytes,
                         "memory_error": predicted / measured_bytes - 1,
                         "screen_memory_error":
                             screen / measured_bytes - 1,
                         "predicted_ms": p["step_seconds"] * 1000,
                         "measured_ms": m["ms"],
                         "measured_matmul_share": m["matmuls"],
                         "measured_collective_share": m["collectives"],
                         "predicted_ms_by_part": {
                             k: v * 1000 for k, v in
                             p.get("step_seconds_by_part", {}).items()}})
            print("%-40s memory %7.2f MiB predicted (compiled; screen "
                  "%+5.1f%%), %7.2f measured (%+5.1f%%); step %7.1f ms "
                  "predicted, %7.1f measured" % (
                      plan["plan"], predicted / 2**20,
                      100 * rows[-1]["screen_memory_error"],
                      measured_bytes / 2**20,
                      100 * rows[-1]["memory_error"],
                      rows[-1]["predicted_ms"], m["ms"]), flush=True)
        rho = spearman([r["predicted_ms"] for r in rows],
                       [r["measured_ms"] for r in rows])
        worst = max(abs(r["memory_error"]) for r in rows)
        print("memory: largest error %.1f%%; step times: Spearman %.2f over %d "
              "plans" % (100 * worst, rho, len(rows)))
        json.dump({"ranks": RANKS, "rounds": a.rounds, "hardware": desc,
                   "calibration_ms": {"dp=%d" % RANKS: measured[0]["ms"],
                                      "tp=%d" % RANKS: measured[
                                          configs.index("tp=%d" % RANKS)]["ms"]},
                   "plans": rows, "spearman": rho,
                   "largest_memory_error": worst}, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
