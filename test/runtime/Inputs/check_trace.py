#!/usr/bin/env python3
"""Summarizes a trace written by a compiled program's --trace for FileCheck:
ranks, steps per rank, compute and communication events per rank (which
must agree across ranks), and whether every event lies inside a step."""
import argparse
import collections
import json

p = argparse.ArgumentParser()
p.add_argument("files", nargs="+")
p.add_argument("--ranks", type=int, required=True)
p.add_argument("--steps", type=int, required=True)
args = p.parse_args()
events = []
for f in args.files:
    events += json.load(open(f))["traceEvents"]
# Host tracks only: a GPU run adds tracks of its streams (ids from 1 << 20).
names = {e["tid"] for e in events if e["ph"] == "M" and e["tid"] < 1 << 20}
steps = collections.Counter(e["tid"] for e in events if e.get("cat") == "step")
assert len(names) == args.ranks, f"{len(names)} ranks named"
assert all(steps[r] == args.steps for r in names), steps
print(f"ranks {len(names)}, steps {args.steps} each")
for cat in ("compute", "communication"):
    per = collections.Counter(e["tid"] for e in events if e.get("cat") == cat)
    counts = {per[r] for r in names}
    where = "on every rank" if len(counts) == 1 else f"differs: {dict(per)}"
    print(f"{cat} events per rank: {per[min(names)]} {where}")
spans = collections.defaultdict(list)
for e in events:
    if e.get("cat") == "step":
        spans[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
inside = all(any(a <= e["ts"] and e["ts"] + e["dur"] <= b + 1
                 for a, b in spans[e["tid"]])
             for e in events if e.get("cat") in ("compute", "communication"))
print("events nest in their step: " + ("yes" if inside else "no"))
