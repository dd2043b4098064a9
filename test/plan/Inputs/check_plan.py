"""Checks tessel-plan's output: the first plan's degrees, and how much
slower the --compare plan (the decision table's degrees) is than the first.

  check_plan.py OUTPUT --first "dp=8 tp=1 pp=1" [--table-within 5]
                [--table-slower-than 5]
"""
import argparse
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("output")
ap.add_argument("--first", required=True)
ap.add_argument("--table-within", type=float)
ap.add_argument("--table-slower-than", type=float)
a = ap.parse_args()
text = open(a.output).read()
first = re.search(r"^\s+1 (dp=\d+ tp=\d+ pp=\d+)(.*?)\|.*$", text, re.M)
if not first:
    sys.exit("no first plan in the output")
ok = True
if first.group(1) != a.first:
    print("first plan %s, expected %s" % (first.group(1), a.first))
    ok = False
if not first.group(0).rstrip().endswith("verified"):
    print("the first plan was not verified")
    ok = False
cmp = re.search(r"^compare \S+: (.*), ([0-9.]+) s per step, ([0-9.]+)% slower",
                text, re.M)
if (a.table_within is not None or a.table_slower_than is not None) and not cmp:
    print("no compare line")
    ok = False
elif cmp:
    slower = float(cmp.group(3))
    if a.table_within is not None and slower > a.table_within:
        print("the table's plan is %.1f%% slower, over %.1f%%"
              % (slower, a.table_within))
        ok = False
    if a.table_slower_than is not None and slower <= a.table_slower_than:
        print("the table's plan is only %.1f%% slower (pinned: over %.1f%%; "
              "update docs/planning.md)" % (slower, a.table_slower_than))
        ok = False
print("first %s%s: %s" % (first.group(1), first.group(2).rstrip(),
                          "ok" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
