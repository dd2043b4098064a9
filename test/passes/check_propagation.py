#!/usr/bin/env python3
"""Property checks of --tessel-propagate.

  --random N --seed S: generates N random programs (random meshes of 1-4
    axes, some dimensions split over sub-axes, random shapes, ops of every rule kind, random annotations: open and
    closed dimensions, several axes per dimension, priorities, sharding
    constraints, result annotations), propagates them, and checks that
      * propagation succeeds and its output verifies,
      * every op result and every argument and result has a sharding,
      * propagating the output again changes nothing (idempotence),
      * closed user dimensions are exactly as annotated.
  --dp-everywhere FILE: checks that in propagated IR every op result of rank
    >= 3 (activations [batch, ...]) is sharded over "dp" on dimension 0.
"""
import argparse
import random
import re
import subprocess
import sys


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.n = 0
        self.lines = []
        self.args = []
        k = rng.choice([1, 1, 2, 2, 3, 4])
        self.axes = rng.sample(["x", "y", "z", "w"], k)
        # Four axes of 2 (16 devices) keep the interpreter's threads few.
        # One axis may be 6 or 8: sizes with factors for sub-axes.
        self.sizes = {a: 2 if k == 4 else rng.choice(
            [2, 3, 4, 4, 6, 8] if k == 1 else [2, 3, 4]) for a in self.axes}
        self.values = []  # (name, shape)
        self.constraints = set()
        self.closed = []  # (value name, dim, axes) user-closed dims

    def dim(self):
        return self.rng.choice([1, 2, 3, 4, 6, 8, 12, 16])

    def ty(self, shape):
        return "tensor<%sf32>" % "".join("%dx" % d for d in shape)

    def sharding(self, shape, name=None):
        free = list(self.axes)
        self.rng.shuffle(free)
        dims = []
        for d in range(len(shape)):
            take, later = [], []
            while free and self.rng.random() < 0.4 and len(take) < 2:
                a = free.pop()
                n = self.sizes.get(a, 1)  # 1: already a sub-axis
                cuts = [p for p in range(2, n) if n % p == 0]
                if cuts and self.rng.random() < 0.3:
                    # The major or the minor part of `a` (a sub-axis); the
                    # other part stays free for a later dimension.
                    p = self.rng.choice(cuts)
                    parts = ["%s:(1)%d" % (a, p), "%s:(%d)%d" % (a, p, n // p)]
                    self.rng.shuffle(parts)
                    a = parts[0]
                    later.append(parts[1])
                take.append(a)
            free = later + free
            is_open = self.rng.random() < 0.5
            body = ", ".join('"%s"' % a if ":" not in a else
                             '"%s":%s' % tuple(a.split(":")) for a in take)
            if is_open:
                body = body + ", ?" if body else "?"
            prio = "p%d" % self.rng.randint(0, 2) if (
                take and self.rng.random() < 0.25) else ""
            dims.append("{%s}%s" % (body, prio))
            if not is_open and name is not None:
                self.closed.append((name, d, take))
        return "#tessel.sharding<@mesh, [%s]>" % ", ".join(dims)

    def fresh(self):
        self.n += 1
        return "%%v%d" % self.n

    def arg(self, shape, annotate=None):
        name = "%%a%d" % len(self.args)
        attrs = ""
        if annotate if annotate is not None else self.rng.random() < 0.5:
            attrs = " {tessel.sharding = %s}" % self.sharding(shape, name)
        self.args.append("%s: %s%s" % (name, self.ty(shape), attrs))
        self.values.append((name, shape))
        return name, shape

    def emit(self, text, shape):
        v = self.fresh()
        self.lines.append("  %s = %s" % (v, text))
        self.values.append((v, shape))
        return v, shape

    def pick(self, min_rank=0):
        cands = [v for v in self.values if len(v[1]) >= min_rank]
        if not cands:  # make one
            return self.arg([self.dim() for _ in range(max(min_rank, 1))])
        return self.rng.choice(cands)

    def step(self):
        r = self.rng
        kind = r.choice(["unary", "binary", "broadcast", "transpose",
                         "reshape", "dot", "reduce", "softmax", "slice",
                         "concat", "cumsum", "constraint", "norm", "gather",
                         "pad", "layer_norm", "select", "one_hot", "top_k",
                         "iota", "cross_entropy", "scatter", "dropout",
                         "convert", "binary2"])
        if kind == "unary":
            v, s = self.pick()
            op = r.choice(["exp", "tanh", "neg", "relu"])
            return self.emit("tessel.%s %s : %s" % (op, v, self.ty(s)), s)
        if kind == "binary":
            v, s = self.pick()
            same = [x for x in self.values if x[1] == s]
            w, _ = r.choice(same)
            op = r.choice(["add", "mul", "max"])
            return self.emit("tessel.%s %s, %s : %s" % (op, v, w, self.ty(s)),
                             s)
        if kind == "broadcast":
            v, s = self.pick()
            if len(s) >= 4:
                return
            pos = r.randint(0, len(s))
            out = list(s[:pos]) + [self.dim()] + list(s[pos:])
            dims = [d if d < pos else d + 1 for d in range(len(s))]
            return self.emit("tessel.broadcast_in_dim %s, dims = [%s] : (%s) "
                             "-> %s" % (v, ", ".join(map(str, dims)),
                                        self.ty(s), self.ty(out)), out)
        if kind == "transpose":
            v, s = self.pick(2)
            perm = list(range(len(s)))
            r.shuffle(perm)
            out = [s[p] for p in perm]
            return self.emit("tessel.transpose %s, permutation = [%s] : (%s) "
                             "-> %s" % (v, ", ".join(map(str, perm)),
                                        self.ty(s), self.ty(out)), out)
        if kind == "reshape":
            v, s = self.pick(1)
            s = list(s)
            if len(s) >= 2 and r.random() < 0.5:
                i = r.randint(0, len(s) - 2)
                out = s[:i] + [s[i] * s[i + 1]] + s[i + 2:]
            else:
                i = r.randint(0, len(s) - 1)
                divs = [d for d in (2, 3, 4) if s[i] % d == 0]
                if not divs or len(s) >= 4:
                    return
                d = r.choice(divs)
                out = s[:i] + [d, s[i] // d] + s[i + 1:]
            return self.emit("tessel.reshape %s : (%s) -> %s" % (
                v, self.ty(s), self.ty(out)), out)
        if kind == "dot":
            v, s = self.pick(1)
            n = self.dim()
            w, ws = self.arg([s[-1], n])
            out = list(s[:-1]) + [n]
            return self.emit(
                "tessel.dot_general %s, %s, batching = [] x [], contracting "
                "= [%d] x [0] : (%s, %s) -> %s" % (
                    v, w, len(s) - 1, self.ty(s), self.ty(ws), self.ty(out)),
                out)
        if kind == "reduce":
            v, s = self.pick(1)
            dims = sorted(r.sample(range(len(s)), r.randint(1, len(s))))
            out = [d for i, d in enumerate(s) if i not in dims]
            op = r.choice(["sum", "max", "mean"])
            return self.emit("tessel.reduce %s %s, dims = [%s] : (%s) -> %s" % (
                op, v, ", ".join(map(str, dims)), self.ty(s), self.ty(out)),
                out)
        if kind == "softmax":
            v, s = self.pick(1)
            return self.emit("tessel.softmax %s, dim = %d : %s" % (
                v, r.randint(0, len(s) - 1), self.ty(s)), s)
        if kind == "cumsum":
            v, s = self.pick(1)
            return self.emit("tessel.cumsum %s, dim = %d : %s" % (
                v, r.randint(0, len(s) - 1), self.ty(s)), s)
        if kind == "slice":
            v, s = self.pick(1)
            d = r.randint(0, len(s) - 1)
            start = [0] * len(s)
            limit = list(s)
            limit[d] = r.randint(1, s[d])
            # Offsets, some longer than a device's block (halo exchange).
            c = r.random()
            if c < 0.3:
                start[d] = r.randint(0, limit[d] - 1)
            elif c < 0.6:  # a few rows off the front: blocks keep their size
                limit[d] = s[d]
                start[d] = min(r.randint(1, 3), s[d] - 1)
            out = list(limit)
            out[d] = limit[d] - start[d]
            return self.emit(
                "tessel.slice %s, start = [%s], limit = [%s], strides = [%s]"
                " : (%s) -> %s" % (v, ", ".join(map(str, start)),
                                   ", ".join(map(str, limit)),
                                   ", ".join("1" for _ in s), self.ty(s),
                                   self.ty(out)), out)
        if kind == "concat":
            v, s = self.pick(1)
            d = r.randint(0, len(s) - 1)
            out = list(s)
            out[d] *= 2
            return self.emit("tessel.concatenate %s, %s dim = %d : (%s, %s) "
                             "-> %s" % (v, v, d, self.ty(s), self.ty(s),
                                        self.ty(out)), out)
        if kind == "norm":
            v, s = self.pick(1)
            g, gs = self.arg([s[-1]])
            return self.emit("tessel.rms_norm %s, %s, epsilon = 1.0e-05 : "
                             "%s, %s" % (v, g, self.ty(s), self.ty(gs)), s)
        if kind == "gather":
            v, s = self.pick(2)
            n = self.dim()
            idx = "%%a%d" % len(self.args)
            self.args.append("%s: tensor<%dxi32>" % (idx, n))
            out = [n] + list(s[1:])
            return self.emit("tessel.gather %s[%s], axis = 0 : (%s, tensor<%d"
                             "xi32>) -> %s" % (v, idx, self.ty(s), n,
                                               self.ty(out)), out)
        if kind == "pad":
            v, s = self.pick(1)
            d = r.randint(0, len(s) - 1)
            lo, hi = [0] * len(s), [0] * len(s)
            lo[d], hi[d] = r.randint(0, 2), r.randint(1, 2)
            if r.random() < 0.3:  # a shift longer than a block
                lo[d] = r.randint(0, max(1, s[d]))
            out = [x + lo[i] + hi[i] for i, x in enumerate(s)]
            return self.emit("tessel.pad %s, low = [%s], high = [%s], value = "
                             "1.5 : (%s) -> %s" % (
                                 v, ", ".join(map(str, lo)),
                                 ", ".join(map(str, hi)), self.ty(s),
                                 self.ty(out)), out)
        if kind == "layer_norm":
            v, s = self.pick(1)
            g, gs = self.arg([s[-1]])
            bb, _ = self.arg([s[-1]])
            return self.emit("tessel.layer_norm %s, %s, %s, epsilon = 1.0e-05"
                             " : %s, %s" % (v, g, bb, self.ty(s), self.ty(gs)),
                             s)
        if kind == "select":
            v, s = self.pick()
            same = [x for x in self.values if x[1] == s]
            w, _ = r.choice(same)
            p = self.fresh()
            self.lines.append("  %s = tessel.compare %s, %s, %s : %s" % (
                p, r.choice(["lt", "ge", "ne"]), v, w, self.ty(s)))
            pt = "tensor<%si1>" % "".join("%dx" % d for d in s)
            return self.emit("tessel.select %s, %s, %s : %s, %s" % (
                p, v, w, pt, self.ty(s)), s)
        if kind == "one_hot":
            n = self.dim()
            idx = "%%a%d" % len(self.args)
            self.args.append("%s: tensor<%dxi32>" % (idx, n))
            depth = r.choice([3, 4, 8])
            out = [n, depth]
            return self.emit("tessel.one_hot %s : (tensor<%dxi32>) -> %s" % (
                idx, n, self.ty(out)), out)
        if kind == "top_k":
            v, s = self.pick(1)
            k = r.randint(1, s[-1])
            out = list(s[:-1]) + [k]
            res = self.fresh()
            self.lines.append("  %s:2 = tessel.top_k %s, k = %d : (%s) -> "
                              "(%s, tensor<%si32>)" % (
                                  res, v, k, self.ty(s), self.ty(out),
                                  "".join("%dx" % d for d in out)))
            self.values.append((res + "#0", out))
            return
        if kind == "iota":
            out = [self.dim() for _ in range(r.randint(1, 2))]
            return self.emit("tessel.iota dim = %d : %s" % (
                r.randint(0, len(out) - 1), self.ty(out)), out)
        if kind == "cross_entropy":
            v, s = self.pick(2)
            lab = "%%a%d" % len(self.args)
            lt = "tensor<%si32>" % "".join("%dx" % d for d in s[:-1])
            self.args.append("%s: %s" % (lab, lt))
            red = r.choice(["mean", "sum", "none"])
            out = list(s[:-1]) if red == "none" else []
            return self.emit(
                "tessel.softmax_cross_entropy %s, %s, ignore_index = -100, "
                "reduction = %s : (%s, %s) -> %s" % (
                    v, lab, red, self.ty(s), lt, self.ty(out)), out)
        if kind == "scatter":
            v, s = self.pick(1)
            n = self.dim()
            idx = "%%a%d" % len(self.args)
            self.args.append("%s: tensor<%dxi32>" % (idx, n))
            u, us = self.arg([n] + list(s[1:]))
            return self.emit("tessel.scatter_add %s[%s], %s, axis = 0 : (%s, "
                             "tensor<%dxi32>, %s) -> %s" % (
                                 v, idx, u, self.ty(s), n, self.ty(us),
                                 self.ty(s)), s)
        if kind == "dropout":
            seed = "%%a%d" % len(self.args)
            self.args.append("%s: tensor<i64>" % seed)
            out = [self.dim() for _ in range(r.randint(1, 3))]
            return self.emit("tessel.dropout_mask %s, rate = 0.25 : "
                             "(tensor<i64>) -> %s" % (seed, self.ty(out)),
                             out)
        if kind == "convert":
            v, s = self.pick()
            w = self.fresh()
            f64 = "tensor<%sf64>" % "".join("%dx" % d for d in s)
            self.lines.append("  %s = tessel.convert %s : (%s) -> %s" % (
                w, v, self.ty(s), f64))
            return self.emit("tessel.convert %s : (%s) -> %s" % (
                w, f64, self.ty(s)), s)
        if kind == "binary2":
            v, s = self.pick()
            same = [x for x in self.values if x[1] == s]
            w, _ = r.choice(same)
            op = r.choice(["sub", "div", "min"])
            return self.emit("tessel.%s %s, %s : %s" % (op, v, w, self.ty(s)),
                             s)
        if kind == "constraint":
            v, s = self.pick(1)
            res = self.fresh()
            text = "tessel.sharding_constraint %s <%s> : %s" % (
                v, self.sharding(s, res)[len("#tessel.sharding<"):-1],
                self.ty(s))
            self.lines.append("  %s = %s" % (res, text))
            self.values.append((res, s))
            self.constraints.add(res)

    def program(self):
        for _ in range(self.rng.randint(1, 3)):
            self.arg([self.dim() for _ in range(self.rng.randint(1, 3))])
        for _ in range(self.rng.randint(3, 14)):
            self.step()
        defined = [v for v in self.values
                   if v[0].startswith("%v") and v[0] not in self.constraints]
        if not defined:
            self.emit("tessel.neg %s : %s" % (self.values[0][0],
                                              self.ty(self.values[0][1])),
                      self.values[0][1])
            defined = [self.values[-1]]
        rets = self.rng.sample(defined, min(len(defined),
                                            self.rng.randint(1, 2)))
        rtypes = []
        for name, s in rets:
            attr = ""
            if self.rng.random() < 0.3:
                attr = " {tessel.sharding = %s}" % self.sharding(s, name)
            rtypes.append(self.ty(s) + attr)
        mesh = ", ".join('"%s"=%d' % (a, self.sizes[a]) for a in self.axes)
        return ("tessel.mesh @mesh [%s]\nfunc.func @f(%s) -> (%s) {\n%s\n"
                "  return %s : %s\n}\n" % (
                    mesh, ", ".join(self.args), ", ".join(rtypes),
                    "\n".join(self.lines), ", ".join(n for n, _ in rets),
                    ", ".join(self.ty(s) for _, s in rets)))


SEP = "// -----\n"


def run_opt(tool, text):
    return subprocess.run([tool, "-", "--split-input-file",
                           "--tessel-propagate", "--mlir-print-debuginfo=false"],
                          input=text, capture_output=True, text=True)


def check_random(tool, n, seed):
    rng = random.Random(seed)
    gens, programs = [], []
    for _ in range(n):
        g = Gen(rng)
        programs.append(g.program())
        gens.append(g)
    first = run_opt(tool, SEP.join(programs))
    if first.returncode:
        print("FAIL propagation failed:\n" + first.stderr[-3000:])
        return 1
    chunks = first.stdout.split("// -----\n")
    if len(chunks) != n:
        print("FAIL expected %d outputs, got %d" % (n, len(chunks)))
        return 1
    second = run_opt(tool, first.stdout)
    failures = 0
    if second.returncode or second.stdout != first.stdout:
        # Find the first program that is not idempotent.
        for i, c in enumerate(chunks):
            again = run_opt(tool, c)
            if again.stdout.strip() != c.strip():
                print("FAIL not idempotent (program %d):\n%s\n--- first:\n%s"
                      "\n--- second:\n%s" % (i, programs[i], c, again.stdout))
                failures += 1
                break
    for i, c in enumerate(chunks):
        for line in c.splitlines():
            s = line.strip()
            if re.match(r"%\S+(:\d+)? = tessel\.", s) and \
                    "tessel.sharding =" not in s:
                print("FAIL value without a sharding (program %d): %s" % (
                    i, s))
                failures += 1
            if s.startswith("func.func"):
                args = re.findall(r"%arg\d+: tensor<[^>]*>( \{[^}]*\})?", s)
                for a in args:
                    if "tessel.sharding" not in a:
                        print("FAIL argument without a sharding (program %d)"
                              ": %s" % (i, s))
                        failures += 1
    # Closed dimensions of annotated arguments come out exactly as written.
    dims_re = re.compile(r"\{([^{}]*)\}(p\d+)?")
    for i, (prog, c) in enumerate(zip(programs, chunks)):
        given = re.findall(r"%a(\d+): tensor<[^>]*> \{tessel.sharding = "
                           r"#tessel.sharding<@mesh, \[(.*?)\]>\}", prog)
        head = next(l for l in c.splitlines() if "func.func" in l)
        for idx, body in given:
            m = re.search(r"%%arg%s: tensor<[^>]*> \{tessel.sharding = "
                          r"#tessel.sharding<@mesh, \[(.*?)\]>\}" % idx, head)
            if not m:
                print("FAIL annotated argument %%a%s lost its sharding" % idx)
                failures += 1
                continue
            before = dims_re.findall(body)
            after = dims_re.findall(m.group(1))
            for (b, _), (a, _) in zip(before, after):
                if "?" not in b and a != b:
                    print("FAIL closed dimension {%s} of %%a%s became {%s} "
                          "(program %d)" % (b, idx, a, i))
                    failures += 1
    print("%d programs, %d failures" % (n, failures))
    return 1 if failures else 0


def check_dp(path):
    bad = 0
    total = 0
    for line in open(path):
        m = re.match(r"\s*%\S+ = (tessel\.\w+).*tessel\.sharding = "
                     r"#tessel\.sharding<@mesh, \[(\{[^}]*\})[^>]*>.*-> "
                     r"tensor<((\d+x){3,})\w+>\s*$", line) or re.match(
                         r"\s*%\S+ = (tessel\.\w+).*tessel\.sharding = "
                         r"#tessel\.sharding<@mesh, \[(\{[^}]*\})[^>]*>\} : "
                         r"tensor<((\d+x){3,})\w+>\s*$", line)
        if not m:
            continue
        total += 1
        if '"dp"' not in m.group(2):
            print("FAIL not batch-sharded: " + line.strip()[:200])
            bad += 1
    print("%d activations of rank >= 3, %d not sharded over dp" % (total, bad))
    return 1 if bad or total == 0 else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool")
    p.add_argument("--random", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dp-everywhere")
    o = p.parse_args()
    if o.dp_everywhere:
        return check_dp(o.dp_everywhere)
    return check_random(o.tool, o.random, o.seed)


if __name__ == "__main__":
    sys.exit(main())
