"""Peak buffer bytes of pipeline rank 0, from the runtime's own statistics.

Compiles one model with each schedule and microbatch count given, runs two
steps, and reads the peak the runtime's allocator saw on rank 0 (the end of
the summary line, "peak buffers X MiB on rank 0"). Then checks what the
schedules promise about activation memory on the first stage:

* GPipe keeps every microbatch's activations until its backwards: its peak
  grows by the same amount A > 0 (one microbatch's activations) with each
  microbatch;
* 1F1B and ZB-H1 keep at most p microbatches: their peak is the same for
  every m >= 2p; 1F1B's is at most GPipe's with p microbatches plus A / 2
  (what else it keeps at once, the gradients' running sums over
  microbatches, is small next to A on the model the test picks; a (p+1)-th
  microbatch would add A). ZB-H1 also keeps the inputs of the weight-
  gradient passes (W) it defers, part of one microbatch's activations: its
  peak is below GPipe's with p + 1 microbatches (on this model it is 1F1B's
  plus 0.52 A).

Prints one line per measurement and per check; exits 1 if a check fails.
"""
import argparse
import os
import re
import subprocess
import sys


def peak(args, schedule, m):
    exe = os.path.join(args.work, "%s-%d" % (schedule, m))
    subprocess.run([os.path.join(args.bin, "tessel-compile"), args.model,
                    "--optimizer", "sgd lr=0.1", "--pipeline",
                    "schedule=%s microbatches=%d" % (schedule, m), "-o", exe],
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([os.path.join(args.bin, "tessel-run"), exe,
                          "--steps", "2"], check=True, capture_output=True,
                         text=True).stdout
    mib = float(re.search(r"peak buffers ([0-9.]+) MiB on rank 0", out).group(1))
    print("peak %s m=%d: %.3f MiB" % (schedule, m, mib))
    return mib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--counts", required=True, help="e.g. 2,4,6")
    ap.add_argument("--bounded", default="1f1b,zb-h1")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    counts = [int(c) for c in args.counts.split(",")]
    p, ok = args.ranks, True

    def check(cond, what):
        nonlocal ok
        ok &= cond
        print(("ok: " if cond else "FAILED: ") + what)

    gpipe = {m: peak(args, "gpipe", m) for m in counts}
    steps = [(gpipe[b] - gpipe[a]) / (b - a) for a, b in zip(counts, counts[1:])]
    check(steps[0] > 0 and all(abs(s - steps[0]) <= 0.02 * steps[0] for s in steps),
          "gpipe grows by %.3f MiB per microbatch" % steps[0])
    assert p in gpipe, "--counts must include p"
    for schedule in args.bounded.split(","):
        bounded = [m for m in counts if m >= 2 * p]
        peaks = {m: peak(args, schedule, m) for m in bounded}
        first = peaks[bounded[0]]
        check(all(abs(v - first) <= 0.001 * first for v in peaks.values()),
              "%s stays at %.3f MiB for m in %s" % (schedule, first, bounded))
        slack, what = ((0.5, "p + A/2") if schedule != "zb-h1" else
                       (0.99, "p + 0.99 A, its deferred W inputs"))
        check(max(peaks.values()) <= gpipe[p] + slack * steps[0],
              "%s keeps at most p microbatches: %.3f MiB <= gpipe's %.3f "
              "with %s" % (schedule, max(peaks.values()),
                           gpipe[p] + slack * steps[0], what))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
