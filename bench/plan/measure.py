#!/usr/bin/env python3
"""tessel-plan's predictions against measurements on this machine.

A small GPT on 4 ranks (threads of one process), trained in several
layouts: for each, tessel-plan --evaluate predicts the per-rank memory and
the step time (with a description of this CPU calibrated first: the matmul
rate and the collective bandwidth the runtime reaches here), tessel-compile
--plan compiles the plan and the executable runs it. Compares the predicted
peak memory per rank (tessel-plan's reading of the plan it compiles, and
the screen's equations) with the measured one (the runtime's peak buffers
plus the step's arguments, which it keeps apart) and ranks the step times.

  bench/plan/measure.py [--build build] [--ranks 4|2]
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
# On 2 cores, 4 thread ranks share them: a rank idle in a pipeline bubble
# lends its core to another, which the cost model (devices that do not
# share compute, like GPUs) does not describe. With 2 ranks each has a
# core, as each GPU has its own SMs.
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
    return {"ms": ms, "peak_buffers": peak * 2**20,
            "collectives": float(coll.group(1)) / 100 if coll else 0,
            "gflops": float(rate.group(1)) if rate else 0}


def compile_and_run(bin_, tmp, name, plan_json, steps=8):
    plan = json.load(open(plan_json))
    mlir = os.path.join(tmp, name + ".mlir")
    model(bin_, plan["model_batch"], mlir)
    exe = os.path.join(tmp, name)
    run([os.path.join(bin_, "tessel-compile"), mlir, "--plan", plan_json,
         "-o", exe])
    local = os.path.join(tmp, name + ".local.mlir")
    run([os.path.join(bin_, "tessel-compile"), mlir, "--plan", plan_json,
         "--emit", "local", "-o", local])
    args = ["--steps", str(steps), "--threads", "1"]
    if plan["accumulate"]:
        args += ["--batch-size", str(plan["global_batch"])]
    out = run([exe] + args)
    report = json.loads(run([os.path.join(bin_, "tessel-opt"), local,
                             "--tessel-memory-report=format=json",
                             "-o", os.devnull]))
    steps_ = [f for f in report
              if re.fullmatch(r"train_step(_pp0)?", f["function"])]
    comm = json.loads(run([os.path.join(bin_, "tessel-opt"), local,
                           "--tessel-comm-report=format=json",
                           "-o", os.devnull]))
    sent = 0
    for f in comm.get("functions", []):
        if re.fullmatch(r"train_step(_pp0)?", f.get("function", "")):
            sent = sum(c["sent_bytes"] for c in f["collectives"])
    s = summary(out)
    s["arguments"] = steps_[0]["argument_bytes"]
    s["sent_bytes"] = sent
    return plan, s


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


def calibrate(bin_, tmp):
    """This CPU as a hardware description: 4 ranks on the cores there are;
    the matmul rate of a dp=4 step, the bandwidth of a tp=4 step's
    collectives (the bytes the comm report counts over the time the
    runtime spent in them)."""
    seed = {"name": "this CPU, %d thread ranks" % RANKS, "memory_gib": 6,
            "peak_tflops": {"f32": 1.0}, "matmul_efficiency": 1.0,
            "overlap": 0.0, "devices_per_node": RANKS,
            "compute_units_per_node": len(os.sched_getaffinity(0)),
            "links": {"intra_node": {"bandwidth_gbytes_per_s": 1,
                                     "latency_us": 20},
                      "inter_node": {"bandwidth_gbytes_per_s": 1,
                                     "latency_us": 20}}}
    hw = os.path.join(tmp, "cpu.json")
    json.dump(seed, open(hw, "w"))
    _, dp = compile_and_run(bin_, tmp, "cal-dp",
                            plan_for(bin_, tmp, "dp=%d" % RANKS, hw, "cal-dp"))
    _, tp = compile_and_run(bin_, tmp, "cal-tp",
                            plan_for(bin_, tmp, "tp=%d" % RANKS, hw, "cal-tp"))
    seed["peak_tflops"]["f32"] = dp["gflops"] / 1000
    bw = tp["sent_bytes"] / (tp["collectives"] * tp["ms"] / 1000)
    for link in seed["links"].values():
        link["bandwidth_gbytes_per_s"] = bw / 1e9
    json.dump(seed, open(hw, "w"), indent=1)
    return hw, seed


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
    a = ap.parse_args()
    global RANKS
    RANKS = a.ranks
    configs = CONFIGS if RANKS == 4 else CONFIGS_2
    bin_ = os.path.join(a.build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        hw, desc = calibrate(bin_, tmp)
        rows = []
        for i, spec in enumerate(configs):
            plan, m = compile_and_run(
                bin_, tmp, "c%d" % i, plan_for(bin_, tmp, spec, hw, "c%d" % i))
            p = plan["predicted"]
            screen = sum(p["memory_bytes"].values())
            # The runtime reports rank 0, which runs pipeline stage 0.
            predicted = (p.get("memory_bytes_compiled_by_stage") or
                         [p.get("memory_bytes_compiled") or screen])[0]
            measured = m["arguments"] + m["peak_buffers"]
            rows.append({"plan": plan["plan"], "evaluate": spec,
                         "predicted_bytes": predicted,
                         "screen_bytes": screen,
                         "measured_bytes": measured,
                         "memory_error": predicted / measured - 1,
                         "screen_memory_error": screen / measured - 1,
                         "predicted_ms": p["step_seconds"] * 1000,
                         "measured_ms": m["ms"]})
            print("%-40s memory %7.2f MiB predicted (compiled; screen %+5.1f%%), "
                  "%7.2f measured (%+5.1f%%); step %7.1f ms predicted, %7.1f "
                  "measured" % (
                      plan["plan"], predicted / 2**20,
                      100 * rows[-1]["screen_memory_error"], measured / 2**20,
                      100 * rows[-1]["memory_error"],
                      rows[-1]["predicted_ms"], m["ms"]), flush=True)
        rho = spearman([r["predicted_ms"] for r in rows],
                       [r["measured_ms"] for r in rows])
        worst = max(abs(r["memory_error"]) for r in rows)
        print("memory: largest error %.1f%%; step times: Spearman %.2f over %d "
              "plans" % (100 * worst, rho, len(rows)))
        json.dump({"ranks": RANKS, "hardware": desc, "plans": rows,
                   "spearman": rho,
                   "largest_memory_error": worst}, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
