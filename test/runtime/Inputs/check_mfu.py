"""Checks the model FLOPs utilization of a run's --metrics records against
the description's model FLOPs: mfu = FLOPS x MICRO / (ms x RANKS x PEAK).

  check_mfu.py METRICS --flops F --ranks R --peak-tflops P [--micro-steps M]
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("metrics")
ap.add_argument("--flops", type=float, required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--peak-tflops", type=float, required=True)
ap.add_argument("--micro-steps", type=int, default=1)
a = ap.parse_args()
records = [json.loads(l) for l in open(a.metrics) if l.strip()]
steps = [r for r in records if "ms_per_step" in r]
for r in steps:
    want = a.flops * a.micro_steps / (r["ms_per_step"] / 1000 * a.ranks *
                                      a.peak_tflops * 1e12)
    if abs(r["mfu"] - want) > 1e-9 * want:
        raise SystemExit("step %d: mfu %r, expected %r" % (r["step"], r["mfu"],
                                                           want))
print("%d steps, mfu as expected" % len(steps))
