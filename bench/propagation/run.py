#!/usr/bin/env python3
"""Propagation benchmarks (see bench/README.md).

1. Scaling: an N-layer chain of matmul + bias add annotated only at the
   input, N = 625 ... 5000: whole-tool wall time, pass time (--mlir-timing)
   and peak memory of tessel-opt --tessel-propagate, next to upstream
   mlir-opt's sharding-propagation on the equivalent linalg chain.
2. A generated 96-layer GPT forward, hidden 1024: propagation pass time.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def measure(cmd, runs):
    """Best wall time (s), pass time (s) and peak RSS (MiB) over `runs`."""
    best, best_pass, peak = None, None, 0
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        err = p.stderr.read()
        if status != 0:
            sys.exit("failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
        m = re.search(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(TesselPropagatePass|"
                      r"ShardingPropagation)", err, re.M)
        pass_time = float(m.group(1)) if m else float("nan")
        best = wall if best is None else min(best, wall)
        best_pass = pass_time if best_pass is None else min(best_pass,
                                                             pass_time)
        peak = max(peak, usage.ru_maxrss / 1024.0)
    return best, best_pass, peak


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    p.add_argument("--runs", type=int, default=3)
    o = p.parse_args()
    opt = os.path.join(o.build, "bin", "tessel-opt")
    models = os.path.join(o.build, "bin", "tessel-models")
    # Temporary files under TESSEL_BENCH_DIR (default: the system's), removed
    # at the end.
    base = os.environ.get("TESSEL_BENCH_DIR") or None
    if base:
        os.makedirs(base, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tessel-bench-", dir=base)
    try:
        run_all(o, opt, models, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_all(o, opt, models, tmp):
    gen = os.path.join(HERE, "gen_chain.py")

    print("| layers | tessel-opt wall s | tessel pass s | tessel MiB | "
          "mlir-opt wall s | mlir-opt pass s | mlir-opt MiB |")
    print("|---|---|---|---|---|---|---|")
    for n in (625, 1250, 2500, 5000):
        files = {}
        for dialect in ("tessel", "linalg"):
            path = os.path.join(tmp, "%s-%d.mlir" % (dialect, n))
            with open(path, "w") as f:
                subprocess.run([sys.executable, gen, "--layers", str(n),
                                "--dialect", dialect], stdout=f, check=True)
            files[dialect] = path
        t = measure([opt, "--tessel-propagate", "--mlir-timing",
                     files["tessel"], "-o", os.devnull], o.runs)
        u = measure([o.mlir_opt, "--pass-pipeline=builtin.module(func.func("
                     "sharding-propagation))", "--mlir-timing",
                     files["linalg"], "-o", os.devnull], o.runs)
        print("| %d | %.3f | %.3f | %.0f | %.3f | %.3f | %.0f |" % (
            n, t[0], t[1], t[2], u[0], u[1], u[2]))

    print()
    print("Propagate + partition (whole tool, to /dev/null):")
    print()
    print("| layers | tessel-opt wall s | tessel MiB | mlir-opt wall s | "
          "mlir-opt MiB |")
    print("|---|---|---|---|---|")
    for n in (625, 1250, 2500, 5000):
        t = measure([opt, "--tessel-propagate", "--tessel-partition",
                     os.path.join(tmp, "tessel-%d.mlir" % n), "-o",
                     os.devnull], o.runs)
        u = measure([o.mlir_opt, "--pass-pipeline=builtin.module(func.func("
                     "sharding-propagation,shard-partition))",
                     os.path.join(tmp, "linalg-%d.mlir" % n), "-o",
                     os.devnull], o.runs)
        print("| %d | %.3f | %.0f | %.3f | %.0f |" % (n, t[0], t[2], u[0],
                                                      u[2]))

    gpt = os.path.join(tmp, "gpt96.mlir")
    subprocess.run([models, "gpt", "--layers", "96", "--hidden", "1024",
                    "--heads", "16", "--vocab", "50257", "--seq", "1024",
                    "--batch", "8", "--mesh", "dp=2,tp=4", "--strategy",
                    "dp-tp", "-o", gpt], check=True)
    ops = sum(1 for line in open(gpt) if " = tessel." in line)
    t = measure([opt, "--tessel-propagate", "--mlir-timing", gpt, "-o",
                 os.devnull], o.runs)
    print()
    print("GPT forward, 96 layers, hidden 1024 (%d ops), dp=2 x tp=4, "
          "strategy dp-tp: tessel-opt wall %.3f s, propagation pass %.3f s, "
          "%.0f MiB" % (ops, t[0], t[1], t[2]))
    t = measure([opt, "--tessel-propagate", "--tessel-partition", gpt, "-o",
                 os.devnull], o.runs)
    print("  propagate + partition: wall %.3f s, %.0f MiB" % (t[0], t[2]))


if __name__ == "__main__":
    main()
