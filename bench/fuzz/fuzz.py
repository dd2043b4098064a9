#!/usr/bin/env python3
"""Structure-aware random-program fuzzer for Tessel (issues 23 and 24).

Generates random valid `tessel` programs and runs each one exactly as a user
would:

  tessel-interp m.mlir --func F --seed S --save ref.st          (1 device)
  tessel-opt --tessel-propagate m.mlir -o p.mlir
  tessel-opt --tessel-partition p.mlir -o q.mlir
  [tessel-opt --tessel-optimize-collectives q.mlir -o o.mlir]
  tessel-interp q.mlir --func F --seed S --expect ref.st --rtol R --atol A
  (every pass's output must also verify and print back identically)
  [tessel-compile m.mlir --entry F -o exe && ./exe --steps 1 --save out.st;
   tessel-interp m.mlir --func F --seed 0 --expect out.st]  (--compile-every)

Gradient programs run `tessel-opt --tessel-grad=func=f` first and then the
same pipeline on @f_grad.

Each program is classified as ok, wrong (numbers differ), crash (signal,
assertion, LLVM ERROR), refused (a diagnostic at propagation, partitioning,
grad or compile of a valid program), invalid (a pass's output does not verify,
round-trip, or run), hang (timeout) or genbug (the unpartitioned interpreter
rejects the program: a bug of this generator). For every new finding a
reproducer is shrunk (ops bypassed or deleted, results and annotations
dropped while the class and stage persist) and written under OUT/findings/.

Python 3 standard library only. See bench/fuzz/README.md.
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_gen import Gen  # noqa: E402
from fuzz_program import FLOATS, TOL  # noqa: E402
import fuzz_compare  # noqa: E402


CRASH_RE = re.compile(r"LLVM ERROR|Assertion .* failed|Stack dump|PLEASE "
                      r"submit a bug report|Segmentation fault|AddressSanitizer"
                      r"|UNREACHABLE|terminate called")


class Result:
    def __init__(self, cls, stage="", msg="", cmd=""):
        self.cls, self.stage, self.msg, self.cmd = cls, stage, msg, cmd

    def key(self):
        return (self.cls, self.stage)


class Runner:
    def __init__(self, bin_dir, timeout, compile_timeout):
        self.bin = bin_dir
        self.timeout = timeout
        self.compile_timeout = compile_timeout

    def tool(self, name):
        return os.path.join(self.bin, name)

    def run(self, cmd, cwd, timeout=None):
        """-> (kind, rc, text) with kind in ok/fail/crash/hang."""
        for attempt in range(30):
            if os.path.exists(cmd[0]) or not cmd[0].startswith(self.bin):
                break
            time.sleep(10)      # the tools are being rebuilt
        for attempt in range(60):
            try:
                p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     errors="replace", start_new_session=True)
                break
            except OSError as e:
                # A tool being relinked (another engineer rebuilding).
                if attempt == 59:
                    raise SystemExit("cannot run %s: %s" % (cmd[0], e))
                time.sleep(10)
        try:
            out, _ = p.communicate(timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return "hang", None, "timeout after %ss" % (timeout or
                                                        self.timeout)
        if p.returncode < 0 or p.returncode >= 128 or CRASH_RE.search(out):
            return "crash", p.returncode, out
        return ("ok" if p.returncode == 0 else "fail"), p.returncode, out

    def opt_pass(self, cwd, inp, flag, dst, stage):
        """Runs one tessel-opt pass; a failure or an output that does not
        round-trip is a Result, success None."""
        kind, _, out = self.run([self.tool("tessel-opt"), inp, flag, "-o", dst],
                                cwd)
        if kind != "ok":
            return Result({"fail": "refused"}.get(kind, kind), stage, out,
                          "tessel-opt %s %s -o %s" % (inp, flag, dst))
        return self.roundtrip(os.path.join(cwd, dst), cwd, stage)

    def roundtrip(self, path, cwd, stage):
        """Printed output must parse, verify and print identically."""
        kind, rc, out = self.run([self.tool("tessel-opt"), path, "-o",
                                  path + ".rt"], cwd)
        if kind != "ok":
            return Result("crash" if kind == "crash" else "invalid"
                          if kind == "fail" else kind, stage + "-roundtrip",
                          out, "tessel-opt %s" % os.path.basename(path))
        a = open(path).read()
        b = open(path + ".rt").read()
        if a != b:
            return Result("invalid", stage + "-roundtrip",
                          "printed output does not print back identically",
                          "tessel-opt %s" % os.path.basename(path))
        return None

    def check(self, prog, cwd, seed, optimize=False, compile_=False):
        """Runs the pipeline on `prog` (a Program) in `cwd` -> Result."""
        text = prog.render()
        with open(os.path.join(cwd, "m.mlir"), "w") as f:
            f.write(text)
        rtol, atol = TOL[prog.dtype]
        func = "f"
        src = "m.mlir"
        # The input itself must parse and verify, or it is a generator bug.
        kind, rc, out = self.run([self.tool("tessel-opt"), "m.mlir", "-o",
                                  "m.rt"], cwd)
        if kind != "ok":
            return Result("crash" if kind == "crash" else "genbug" if kind ==
                          "fail" else kind, "parse", out,
                          "tessel-opt m.mlir")
        if prog.grad:
            kind, rc, out = self.run([self.tool("tessel-opt"), "m.mlir",
                                      "--tessel-grad=func=f", "-o", "g.mlir"],
                                     cwd)
            cmd = "tessel-opt m.mlir --tessel-grad=func=f -o g.mlir"
            if kind != "ok":
                # The forward must at least run; else the generator is wrong.
                k2, _, o2 = self.run([self.tool("tessel-interp"), "m.mlir",
                                      "--func", "f", "--seed", str(seed)],
                                     cwd)
                if k2 == "fail":
                    return Result("genbug", "interp", o2, "tessel-interp")
                return Result({"fail": "refused"}.get(kind, kind), "grad",
                              out, cmd)
            bad = self.roundtrip(os.path.join(cwd, "g.mlir"), cwd, "grad")
            if bad:
                return bad
            func, src = "f_grad", "g.mlir"
        seeds = ["--seed", str(seed)]
        cmd = "tessel-interp %s --func %s --seed %d --save ref.st" % (
            src, func, seed)
        kind, rc, out = self.run([self.tool("tessel-interp"), src, "--func",
                                  func, "--save", "ref.st"] + seeds, cwd)
        if kind != "ok":
            if prog.grad and kind == "fail":
                k2, _, o2 = self.run([self.tool("tessel-interp"), "m.mlir",
                                      "--func", "f"] + seeds, cwd)
                if k2 == "ok":
                    return Result("invalid", "grad-interp", out, cmd)
            return Result("genbug" if kind == "fail" else kind, "interp", out,
                          cmd)
        passes = [(src, "--tessel-propagate", "p.mlir", "propagate"),
                  ("p.mlir", "--tessel-partition", "q.mlir", "partition")]
        if optimize:
            passes.append(("q.mlir", "--tessel-optimize-collectives", "o.mlir",
                           "optimize"))
        outs = []
        for inp, flag, dst, stage in passes:
            bad = self.opt_pass(cwd, inp, flag, dst, stage)
            if bad:
                return bad
            if stage != "propagate":
                outs.append((dst, stage))
        for path, stage in outs:
            cmd = ("tessel-interp %s --func %s --seed %d --expect ref.st "
                   "--rtol %s --atol %s" % (path, func, seed, rtol, atol))
            kind, rc, out = self.expect(
                prog, [self.tool("tessel-interp"), path, "--func", func] +
                seeds, "ref.st", cwd, rtol, atol)
            if kind == "fail":
                if "MISMATCH" in out or "missing" in out:
                    return Result("wrong", stage, "\n".join(
                        l for l in out.splitlines() if "MISMATCH" in l or
                        "missing" in l), cmd)
                return Result("invalid", stage + "-interp", out, cmd)
            if kind != "ok":
                return Result(kind, stage + "-interp", out, cmd)
        if compile_:
            return self.compile(prog, src, func, cwd, rtol, atol)
        return Result("ok")

    def expect(self, prog, cmd, saved, cwd, rtol, atol,
               reference_is_run=False):
        """Runs the interpreter command `cmd` against the results `saved`.
        f32/f64: `--expect`. 16-bit programs: the run's results are saved
        and compared tensor by tensor (fuzz_compare). With
        `reference_is_run`, the run is the reference and `saved` the
        results under test."""
        if prog.dtype != "bf16":
            return self.run(cmd + ["--expect", saved, "--rtol", rtol,
                                   "--atol", atol], cwd)
        kind, rc, out = self.run(cmd + ["--save", "run.st"], cwd)
        if kind != "ok":
            return kind, rc, out
        ref, got = ((os.path.join(cwd, "run.st"), os.path.join(cwd, saved))
                    if reference_is_run else
                    (os.path.join(cwd, saved), os.path.join(cwd, "run.st")))
        lines = fuzz_compare.compare(ref, got, float(rtol), float(atol))
        return ("fail" if lines else "ok"), (1 if lines else 0), \
            "\n".join(lines)

    def compile(self, prog, src, func, cwd, rtol, atol):
        cmd = "tessel-compile %s --entry %s -o exe" % (src, func)
        kind, rc, out = self.run([self.tool("tessel-compile"), src, "--entry",
                                  func, "-o", "exe"], cwd,
                                 self.compile_timeout)
        if kind != "ok":
            return Result({"fail": "refused"}.get(kind, kind), "compile", out,
                          cmd)
        kind, rc, out = self.run([os.path.join(cwd, "exe"), "--steps", "1",
                                  "--save", "out.st"], cwd)
        if kind != "ok":
            return Result("crash" if kind == "fail" else kind, "exe", out,
                          "./exe --steps 1 --save out.st")
        cmd = ("tessel-interp %s --func %s --expect out.st --rtol %s "
               "--atol %s" % (src, func, rtol, atol))
        kind, rc, out = self.expect(
            prog, [self.tool("tessel-interp"), src, "--func", func],
            "out.st", cwd, rtol, atol, reference_is_run=True)
        if kind == "fail":
            return Result("wrong", "compiled", "\n".join(
                l for l in out.splitlines() if "MISMATCH" in l or "missing"
                in l) or out, cmd)
        if kind != "ok":
            return Result(kind, "compiled-interp", out, cmd)
        return Result("ok")


# ---------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------

def uses(prog):
    u = {}
    for o in prog.ops:
        for v in o.operands:
            u[v] = u.get(v, 0) + 1
    for r in prog.rets:
        u[r["value"]] = u.get(r["value"], 0) + 1
    return u


def replace(prog, old, new):
    for o in prog.ops:
        o.operands = [new if v == old else v for v in o.operands]
    for r in prog.rets:
        if r["value"] == old:
            r["value"] = new


def candidates(prog):
    """Smaller variants of `prog`, biggest cuts first."""
    out = []
    # Drop results (not the loss of a gradient program).
    for i in range(len(prog.rets) - 1, 0 if prog.grad else -1, -1):
        if len(prog.rets) > 1:
            p = prog.copy()
            del p.rets[i]
            out.append(p)
    # Delete dead ops.
    u = uses(prog)
    dead = [i for i, o in enumerate(prog.ops)
            if not any(u.get(n) for n, _ in o.results)]
    if dead:
        p = prog.copy()
        p.ops = [o for i, o in enumerate(p.ops) if i not in dead]
        out.append(p)
    # Delete one dead op.
    for i in dead[:8]:
        p = prog.copy()
        del p.ops[i]
        out.append(p)
    # Cut an op off from what computes it: its result becomes an argument.
    for i in range(len(prog.ops) - 1, -1, -1):
        o = prog.ops[i]
        if len(o.results) != 1 or o.kind == "top_k":
            continue
        name, t = o.results[0]
        if not uses(prog).get(name):
            continue
        p = prog.copy()
        del p.ops[i]
        k = 1 + max([int(a["name"][2:]) for a in prog.args
                     if a["name"].startswith("%c")] + [0])
        arg = "%%c%d" % k
        p.args.append(dict(name=arg, type=t, tname="cut%d" % k,
                           init="int:-3:4" if t[1] in FLOATS else None,
                           sharding=None))
        replace(p, name, arg)
        out.append(p)
    # Bypass an op: its result's uses take an operand (or an argument) of the
    # same type.
    for i in range(len(prog.ops) - 1, -1, -1):
        o = prog.ops[i]
        if len(o.results) != 1:
            continue
        name, t = o.results[0]
        types = {a["name"]: a["type"] for a in prog.args}
        for q in prog.ops[:i]:
            for n, qt in q.results:
                types[n] = qt
        subs = [v for v in o.operands if types.get(v) == t]
        subs += [a["name"] for a in prog.args if a["type"] == t]
        for s in subs[:2]:
            p = prog.copy()
            del p.ops[i]
            replace(p, name, s)
            out.append(p)
    # Drop annotations.
    for i, a in enumerate(prog.args):
        if a.get("sharding"):
            p = prog.copy()
            p.args[i]["sharding"] = None
            out.append(p)
    for i, r in enumerate(prog.rets):
        if r.get("sharding"):
            p = prog.copy()
            p.rets[i]["sharding"] = None
            out.append(p)
    for i, o in enumerate(prog.ops):
        if o.sharding:
            p = prog.copy()
            p.ops[i].sharding = None
            out.append(p)
    # Drop unused arguments.
    u = uses(prog)
    unused = [a for a in prog.args if not u.get(a["name"])]
    if unused:
        p = prog.copy()
        p.args = [a for a in p.args if u.get(a["name"])]
        out.append(p)
    # Drop mesh axes nothing names.
    text = prog.render()
    for i, (a, _) in enumerate(prog.mesh):
        if '"%s"' % a not in text.split("\n", 1)[1]:
            p = prog.copy()
            del p.mesh[i]
            out.append(p)
            break
    return out


def shrink(runner, prog, res, cwd, seed, optimize, compile_, budget_s):
    start = time.time()
    tries = 0
    progress = True
    while progress and time.time() - start < budget_s:
        progress = False
        for c in candidates(prog):
            if time.time() - start > budget_s:
                break
            tries += 1
            r = runner.check(c, cwd, seed, optimize, compile_)
            if r.key() == res.key():
                prog, res = c, r
                progress = True
                break
    return prog, res, tries


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

CLASSES = ["ok", "wrong", "crash", "refused", "invalid", "hang", "genbug"]


def first_line(msg):
    for l in msg.splitlines():
        l = l.strip()
        if l.startswith("#") or not l:
            continue
        if "error" in l or "MISMATCH" in l or "LLVM ERROR" in l or \
                "Assertion" in l or "timeout" in l:
            return l
    lines = [l for l in msg.splitlines() if l.strip()]
    return lines[0] if lines else ""


def crash_frame(msg):
    """The first stack frame outside the signal handler and libc."""
    for m in re.finditer(r"#\d+ 0x[0-9a-f]+ (.*?) \(", msg):
        fn = m.group(1)
        if "llvm::sys::" in fn or fn.startswith("0x") or "abort" in fn or \
                "raise" in fn or "__" in fn[:3]:
            continue
        return re.sub(r"\(.*", "", fn)
    return ""


def signature(res):
    line = first_line(res.msg)
    if res.cls == "crash":
        line = (crash_frame(res.msg) or line)
    line = re.sub(r"^[^:]*\.mlir:\d+:\d+: ", "", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]\d+)?", "N", line)
    line = re.sub(r"%\w+", "%v", line)
    line = re.sub(r'"[^"]*"', '"s"', line)
    return "%s/%s/%s" % (res.cls, res.stage, line[:120])


def write_finding(path, prog, res, seed, optimize, compile_):
    text = prog.render()
    func = "f_grad" if prog.grad else "f"
    steps = []
    src = "m.mlir"
    if prog.grad:
        steps.append("tessel-opt m.mlir --tessel-grad=func=f -o g.mlir")
        src = "g.mlir"
    rtol, atol = TOL[prog.dtype]
    steps += ["tessel-interp %s --func %s --seed %d --save ref.st" % (
        src, func, seed),
        "tessel-opt %s --tessel-propagate -o p.mlir" % src,
        "tessel-opt p.mlir --tessel-partition -o q.mlir"]
    if optimize:
        steps.append("tessel-opt q.mlir --tessel-optimize-collectives -o "
                     "o.mlir")
    steps.append("tessel-interp q.mlir --func %s --seed %d --expect ref.st "
                 "--rtol %s --atol %s" % (func, seed, rtol, atol))
    if compile_:
        steps += ["tessel-compile %s --entry %s -o exe" % (src, func),
                  "./exe --steps 1 --save out.st",
                  "tessel-interp %s --func %s --expect out.st" % (src, func)]
    msg = "\n".join(l for l in res.msg.splitlines()
                    if l.strip())[:1500]
    head = ["// Found by bench/fuzz/fuzz.py: %s at %s." % (res.cls,
                                                          res.stage),
            "// Pipeline (this file is m.mlir):"] + \
        ["//   " + s for s in steps] + \
        ["// Failing command: " + res.cmd, "// Observed:"] + \
        ["//   " + l for l in msg.splitlines()[:25]]
    with open(path, "w") as f:
        f.write("\n".join(head) + "\n" + text)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "build",
                                                  "bin"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--first", type=int, default=0,
                    help="index of the first program (to rerun one)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--compile-every", type=int, default=10,
                    help="compile one program in N (0: never)")
    ap.add_argument("--grad-every", type=int, default=4,
                    help="one program in N is a gradient program (0: never)")
    ap.add_argument("--out", default=None,
                    help="folder for findings (only this is written; "
                         "temporaries go in a folder made under it)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--compile-timeout", type=int, default=240)
    ap.add_argument("--shrink-seconds", type=int, default=120)
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--print", dest="show", action="store_true",
                    help="print the programs only")
    ap.add_argument("-v", "--verbose", action="store_true")
    o = ap.parse_args()

    def make(i):
        rng = random.Random("%d/%d" % (o.seed, i))
        grad = o.grad_every and i % o.grad_every == o.grad_every - 1
        return Gen(rng, grad=bool(grad)).program()

    if o.show:
        for i in range(o.first, o.first + o.count):
            print("// program %d" % i)
            print(make(i).render())
        return 0
    # A SIGTERM still removes the temporaries (the finally below).
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    runner = Runner(os.path.abspath(o.bin), o.timeout, o.compile_timeout)
    base = o.out or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tessel-fuzz-", dir=base)
    findings_dir = os.path.join(o.out, "findings") if o.out else None
    counts = {c: 0 for c in CLASSES}
    seen = {}
    start = time.time()
    try:

        def task(i):
            prog = make(i)
            cwd = os.path.join(work, "p%d" % i)
            os.makedirs(cwd)
            optimize = i % 2 == 1
            compile_ = bool(o.compile_every) and i % o.compile_every == 0
            try:
                res = runner.check(prog, cwd, i, optimize, compile_)
            finally:
                pass
            return i, prog, res, cwd, optimize, compile_

        if o.jobs > 1:
            from concurrent.futures import ThreadPoolExecutor
            ex = ThreadPoolExecutor(o.jobs)
            results = ex.map(task, range(o.first, o.first + o.count))
        else:
            results = map(task, range(o.first, o.first + o.count))
        for i, prog, res, cwd, optimize, compile_ in results:
            counts[res.cls] += 1
            if res.cls != "ok":
                sig = signature(res)
                new = sig not in seen
                seen.setdefault(sig, []).append(i)
                print("[%d] %s at %s (%s)%s: %s" % (
                    i, res.cls, res.stage, "grad" if prog.grad else
                    prog.dtype, "" if new else " (seen)",
                    first_line(res.msg)[:200]), flush=True)
                if new and findings_dir:
                    os.makedirs(findings_dir, exist_ok=True)
                    small, sres, tries = prog, res, 0
                    if not o.no_shrink:
                        small, sres, tries = shrink(
                            runner, prog, res, cwd, i, optimize, compile_,
                            o.shrink_seconds)
                    h = hashlib.sha1(sig.encode()).hexdigest()[:8]
                    path = os.path.join(findings_dir, "%s-%s-%s.mlir" % (
                        res.cls, res.stage, h))
                    write_finding(path, small, sres, i, optimize, compile_)
                    print("    shrunk in %d runs to %d ops: %s" % (
                        tries, len(small.ops), path), flush=True)
            elif o.verbose:
                print("[%d] ok" % i, flush=True)
            shutil.rmtree(cwd, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    el = time.time() - start
    print("seed %d: %d programs in %.0fs (%.1f programs/min); %s" % (
        o.seed, o.count, el, o.count * 60.0 / max(el, 1e-9),
        ", ".join("%s %d" % (c, counts[c]) for c in CLASSES)))
    print("distinct findings: %d" % len(seen))
    for sig, idx in sorted(seen.items()):
        print("  %s  (programs %s)" % (sig, ",".join(map(str, idx[:10]))))
    return 1 if any(counts[c] for c in CLASSES if c != "ok") else 0


if __name__ == "__main__":
    sys.exit(main())
