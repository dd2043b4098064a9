#!/usr/bin/env python3
"""compare_reference.py REF RUN...: the "reference loss X" of REF against
each run's "step 0: loss Y"; equal when |X - Y| <= 2e-6 (the runs print 6
decimals and compute in f32). Prints "reference X, runs Y...: equal"."""
import re
import sys

ref = float(re.search(r"reference loss ([0-9.]+)", open(sys.argv[1]).read()).group(1))
got = [float(re.search(r"step 0: loss ([0-9.]+)", open(f).read()).group(1))
       for f in sys.argv[2:]]
ok = all(abs(g - ref) <= 2e-6 for g in got)
print("reference %.6f, runs %s: %s" % (ref, " ".join("%.6f" % g for g in got),
                                       "equal" if ok else "DIFFER"))
sys.exit(0 if ok else 1)
