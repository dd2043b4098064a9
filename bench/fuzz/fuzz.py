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

AXIS_NAMES = ["x", "y", "z", "dp", "tp"]
TOL = {"f32": ("1e-4", "1e-5"), "f64": ("1e-9", "1e-11"),
       "bf16": ("2e-2", "2e-2")}
FLOATS = ("f32", "f64", "bf16")


# ---------------------------------------------------------------------------
# Program representation
# ---------------------------------------------------------------------------

def tstr(t):
    shape, dt = t
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), dt)


def nelems(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Op:
    """One op: `fmt(operands)` gives the text after `%r = ` up to the attr
    dict, `tail` the text after it (types)."""

    def __init__(self, results, operands, fmt, tail, kind):
        self.results = results      # [(name, type)]
        self.operands = operands    # [name]
        self.fmt = fmt              # callable(list of operand names) -> str
        self.tail = tail            # " : ..." type text
        self.kind = kind
        self.sharding = None        # op-level tessel.sharding attribute text

    def text(self):
        if len(self.results) == 1:
            lhs = self.results[0][0]
        else:
            lhs = "%s:%d" % (self.results[0][0].split("#")[0],
                             len(self.results))
        attr = ""
        if self.sharding:
            attr = " {tessel.sharding = %s}" % self.sharding
        return "  %s = %s%s%s" % (lhs, self.fmt(self.operands), attr,
                                  self.tail)


class Program:
    def __init__(self):
        self.mesh = []          # [(axis, size)]
        self.args = []          # dict(name, type, tname, init, sharding)
        self.ops = []
        self.rets = []          # dict(value, type, tname, sharding)
        self.grad = False
        self.dtype = "f32"

    def copy(self):
        p = Program()
        p.mesh = list(self.mesh)
        p.args = [dict(a) for a in self.args]
        p.ops = []
        for o in self.ops:
            n = Op(list(o.results), list(o.operands), o.fmt, o.tail, o.kind)
            n.sharding = o.sharding
            p.ops.append(n)
        p.rets = [dict(r) for r in self.rets]
        p.grad = self.grad
        p.dtype = self.dtype
        return p

    def render(self):
        out = []
        if self.mesh:
            out.append("tessel.mesh @mesh [%s]" % ", ".join(
                '"%s"=%d' % a for a in self.mesh))
        args = []
        for a in self.args:
            attrs = ['tessel.name = "%s"' % a["tname"]]
            if a.get("init"):
                attrs.append('tessel.init = "%s"' % a["init"])
            if a.get("sharding"):
                attrs.append("tessel.sharding = %s" % a["sharding"])
            args.append("%s: %s {%s}" % (a["name"], tstr(a["type"]),
                                         ", ".join(attrs)))
        rets = []
        for r in self.rets:
            attrs = ['tessel.name = "%s"' % r["tname"]]
            if r.get("sharding"):
                attrs.append("tessel.sharding = %s" % r["sharding"])
            rets.append("%s {%s}" % (tstr(r["type"]), ", ".join(attrs)))
        out.append("func.func @f(%s)\n    -> (%s) {" % (
            ",\n             ".join(args), ", ".join(rets)))
        for o in self.ops:
            out.append(o.text())
        out.append("  return %s : %s" % (
            ", ".join(r["value"] for r in self.rets),
            ", ".join(tstr(r["type"]) for r in self.rets)))
        out.append("}")
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------

def sharding_text(dims):
    """dims: [(axes, open, prio)] -> #tessel.sharding<...>."""
    parts = []
    for axes, is_open, prio in dims:
        body = ", ".join('"%s"' % a for a in axes)
        if is_open:
            body = body + ", ?" if body else "?"
        parts.append("{%s}%s" % (body, "p%d" % prio if prio is not None
                                 else ""))
    return "#tessel.sharding<@mesh, [%s]>" % ", ".join(parts)


def parse_sharding(text):
    """#tessel.sharding<@mesh, [...]> -> [(axes, open, prio)]."""
    body = text[text.index("[") + 1:text.rindex("]")]
    dims = []
    for m in re.finditer(r"\{([^{}]*)\}(p(\d+))?", body):
        items = [s.strip() for s in m.group(1).split(",") if s.strip()]
        dims.append(([s.strip('"') for s in items if s != "?"],
                     "?" in items, int(m.group(3)) if m.group(3) else None))
    return dims


def compatible(a, b):
    """Propagation's rule for two annotations of one value: per dimension
    one axis list is a prefix of the other, a closed one never extended."""
    for (xa, oa, _), (xb, ob, _) in zip(parse_sharding(a), parse_sharding(b)):
        short, long_ = (xa, xb) if len(xa) <= len(xb) else (xb, xa)
        if long_[:len(short)] != short:
            return False
        if len(xa) < len(xb) and not oa:
            return False
        if len(xb) < len(xa) and not ob:
            return False
    return True


class Gen:
    def __init__(self, rng, grad=False):
        self.rng = rng
        self.p = Program()
        self.p.grad = grad
        self.n = 0
        self.pool = []          # [(name, type)]
        self.annots = {}        # value name -> [sharding text] (same value)
        r = rng
        if grad:
            self.p.dtype = r.choice(["f32", "f32", "f64"])
        else:
            self.p.dtype = r.choice(["f32"] * 6 + ["f64"] * 2 + ["bf16"] * 2)
        # How eagerly dimensions take axes, and how often values are
        # annotated: programs range from sparse to dense.
        self.density = r.choice([0.25, 0.4, 0.6])
        self.annotate_rate = r.choice([0.3, 0.5, 0.8])
        # Mesh: 0-3 axes, sizes including 1, at most 12 devices.
        k = r.choice([0, 1, 1, 2, 2, 2, 3, 3, 3])
        names = r.sample(AXIS_NAMES, k)
        total = 1
        for a in names:
            s = r.choice([1, 1, 2, 2, 2, 3, 3, 4, 6])
            while total * s > 12:
                s = r.choice([1, 2])
                if total * s > 12:
                    s = 1
            total *= s
            self.p.mesh.append((a, s))

    # -- helpers ----------------------------------------------------------
    def dim(self):
        return self.rng.choice([1, 1, 2, 3, 4, 4, 5, 6, 8, 12])

    def shape(self, lo=0, hi=3):
        return tuple(self.dim() for _ in range(self.rng.randint(lo, hi)))

    def fresh(self):
        self.n += 1
        return "%%v%d" % self.n

    def sharding(self, shape, dense=False):
        """A random sharding of `shape`: up to three axes per dimension, open
        or closed, priorities; every axis at most once."""
        r = self.rng
        free = [a for a, _ in self.p.mesh]
        r.shuffle(free)
        dims = []
        rate = max(self.density, 0.55) if dense else self.density
        for _ in shape:
            take = []
            while free and len(take) < 3 and r.random() < rate:
                take.append(free.pop())
            is_open = r.random() < 0.45
            prio = r.randint(0, 2) if r.random() < 0.2 else None
            dims.append((take, is_open, prio))
        return sharding_text(dims)

    def new_arg(self, t, init=None, annotate=None):
        name = "%%a%d" % len(self.p.args)
        shard = None
        if self.p.mesh and (annotate if annotate is not None
                            else self.rng.random() < self.annotate_rate):
            shard = self.sharding(t[0])
        if init is None and t[1] in FLOATS:
            init = self.rng.choice(["int:-3:4", "int:-3:4", "normal:1",
                                    "uniform:0.5:2", None])
        self.p.args.append(dict(name=name, type=t, tname="in%d" %
                                len(self.p.args), init=init, sharding=shard))
        if shard:
            self.annots.setdefault(name, []).append(shard)
        if t[1] != "i64":
            self.pool.append((name, t))
        return name

    def pick(self, pred=lambda t: True, make=None):
        cands = [v for v in self.pool if pred(v[1])]
        if not cands or (make and self.rng.random() < 0.1):
            if make is None:
                return None
            t = make()
            return (self.new_arg(t), t)
        # Prefer recent values: chains rather than a flat fan-out.
        if self.rng.random() < 0.6:
            cands = cands[-4:]
        return self.rng.choice(cands)

    def pick_float(self, min_rank=0, max_rank=4):
        dt = self.p.dtype
        return self.pick(lambda t: t[1] == dt and min_rank <= len(t[0])
                         <= max_rank,
                         lambda: (self.shape(max(min_rank, 1),
                                             max(min_rank, 3)), dt))

    def emit(self, kind, operands, fmt, tail, rtype):
        v = self.fresh()
        op = Op([(v, rtype)], operands, fmt, tail, kind)
        # (constant prints its attribute dict before the value; no room.)
        if self.p.mesh and kind != "constant" and self.rng.random() < 0.07:
            op.sharding = self.sharding(rtype[0])
            self.annots.setdefault(v, []).append(op.sharding)
        self.p.ops.append(op)
        self.pool.append((v, rtype))
        return v

    # -- ops --------------------------------------------------------------
    def op_unary(self):
        r = self.rng
        if r.random() < 0.15:
            v = self.pick(lambda t: t[1] == "i32")
            if v:
                name = r.choice(["neg", "abs", "relu"])
                return self.emit(name, [v[0]], lambda o, n=name: "tessel.%s %s"
                                 % (n, o[0]), " : " + tstr(v[1]), v[1])
        v = self.pick_float()
        name = r.choice(["neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt",
                         "tanh", "logistic", "silu", "sin", "cos", "gelu"])
        if name == "gelu":
            ap = r.choice(["tanh", "erf"])
            return self.emit(name, [v[0]], lambda o, a=ap:
                             "tessel.gelu %s approximation = %s" % (o[0], a),
                             " : " + tstr(v[1]), v[1])
        return self.emit(name, [v[0]], lambda o, n=name: "tessel.%s %s" %
                         (n, o[0]), " : " + tstr(v[1]), v[1])

    def same_type(self, t):
        c = [v for v in self.pool if v[1] == t]
        if self.rng.random() < 0.15:
            return (self.new_arg(t), t)
        return self.rng.choice(c)

    def op_binary(self):
        r = self.rng
        if r.random() < 0.15:
            v = self.pick(lambda t: t[1] == "i32")
        else:
            v = self.pick_float()
        if not v:
            v = self.pick_float()
        # The same value twice (x op x) a third of the time.
        w = v if r.random() < 0.33 else self.same_type(v[1])
        ops = ["add", "sub", "mul", "div", "max", "min"]
        if v[1][1] in FLOATS:
            ops.append("pow")
        name = r.choice(ops)
        return self.emit(name, [v[0], w[0]], lambda o, n=name:
                         "tessel.%s %s, %s" % (n, o[0], o[1]),
                         " : " + tstr(v[1]), v[1])

    def op_select(self):
        r = self.rng
        v = self.pick(lambda t: t[1] in FLOATS + ("i32",),
                      lambda: (self.shape(1, 3), self.p.dtype))
        w = v if r.random() < 0.25 else self.same_type(v[1])
        d = r.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        pt = (v[1][0], "i1")
        p = self.emit("compare", [v[0], w[0]], lambda o, d=d:
                      "tessel.compare %s, %s, %s" % (d, o[0], o[1]),
                      " : " + tstr(v[1]), pt)
        x = self.same_type(v[1])
        y = x if r.random() < 0.3 else self.same_type(v[1])
        return self.emit("select", [p, x[0], y[0]], lambda o:
                         "tessel.select %s, %s, %s" % tuple(o),
                         " : %s, %s" % (tstr(pt), tstr(v[1])), v[1])

    def op_convert(self):
        r = self.rng
        dt = self.p.dtype
        v = self.pick(lambda t: t[1] in (dt, "i32", "i1"),
                      lambda: (self.shape(1, 3), dt))
        src = v[1][1]
        if src == dt:
            mid = r.choice([d for d in ("f32", "f64", "bf16", "i32")
                            if d != dt])
            if self.p.grad and mid in ("i32",):
                mid = "f64" if dt == "f32" else "f32"
            t1 = (v[1][0], mid)
            a = self.emit("convert", [v[0]], lambda o: "tessel.convert %s" %
                          o[0], " : (%s) -> %s" % (tstr(v[1]), tstr(t1)), t1)
            if r.random() < 0.3:
                return a
            v = (a, t1)
        t2 = (v[1][0], dt)
        return self.emit("convert", [v[0]], lambda o: "tessel.convert %s" %
                         o[0], " : (%s) -> %s" % (tstr(v[1]), tstr(t2)), t2)

    def op_broadcast(self):
        r = self.rng
        v = self.pick(lambda t: len(t[0]) <= 3 and t[1] != "i1",
                      lambda: (self.shape(0, 2), self.p.dtype))
        s = list(v[1][0])
        out = list(s)
        pos = list(range(len(s)))   # result dim of each operand dim
        for _ in range(r.randint(0 if s else 1, 2)):
            if len(out) >= 4:
                break
            at = r.randint(0, len(out))
            out.insert(at, self.dim())
            pos = [p + 1 if p >= at else p for p in pos]
        # Expand some size-1 operand dims.
        for i, d in enumerate(s):
            if d == 1 and r.random() < 0.5:
                out[pos[i]] = r.choice([2, 3, 4])
        t = (tuple(out), v[1][1])
        return self.emit("broadcast_in_dim", [v[0]], lambda o, pos=pos:
                         "tessel.broadcast_in_dim %s, dims = [%s]" % (
                             o[0], ", ".join(map(str, pos))),
                         " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_reshape(self):
        r = self.rng
        v = self.pick(lambda t: 1 <= len(t[0]) and t[1] != "i1",
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = list(v[1][0])
        c = r.random()
        if c < 0.3 and len(s) >= 2:
            i = r.randint(0, len(s) - 2)
            out = s[:i] + [s[i] * s[i + 1]] + s[i + 2:]
        elif c < 0.6:
            i = r.randint(0, len(s) - 1)
            divs = [d for d in (2, 3, 4, 6) if s[i] % d == 0 and d < s[i]]
            if not divs or len(s) >= 4:
                out = s + [1] if len(s) < 4 else [nelems(s)]
            else:
                d = r.choice(divs)
                out = s[:i] + [d, s[i] // d] + s[i + 1:]
        elif c < 0.75:
            out = [nelems(s)]
        elif c < 0.85:
            # Insert or remove size-1 dims.
            out = [d for d in s if d != 1] if 1 in s else \
                s[:1] + [1] + s[1:]
        else:
            # Any factorization of the element count into up to 3 dims.
            n = nelems(s)
            out = []
            for _ in range(r.randint(1, 2)):
                divs = [d for d in range(2, n + 1) if n % d == 0]
                if not divs:
                    break
                d = r.choice(divs)
                out.append(d)
                n //= d
            out.append(n)
        t = (tuple(out), v[1][1])
        return self.emit("reshape", [v[0]], lambda o: "tessel.reshape %s" %
                         o[0], " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_transpose(self):
        v = self.pick(lambda t: len(t[0]) >= 2,
                      lambda: (self.shape(2, 4), self.p.dtype))
        perm = list(range(len(v[1][0])))
        self.rng.shuffle(perm)
        t = (tuple(v[1][0][p] for p in perm), v[1][1])
        return self.emit("transpose", [v[0]], lambda o, perm=perm:
                         "tessel.transpose %s, permutation = [%s]" % (
                             o[0], ", ".join(map(str, perm))),
                         " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_slice(self):
        r = self.rng
        v = self.pick(lambda t: len(t[0]) >= 1,
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = v[1][0]
        start, limit, strides, out = [], [], [], []
        for d in s:
            if r.random() < 0.5:
                a, b, st = 0, d, 1
            else:
                a = r.randint(0, d)
                b = r.randint(a, d)
                st = 1 if self.p.grad or r.random() < 0.6 else r.randint(2, 3)
            start.append(a)
            limit.append(b)
            strides.append(st)
            out.append((b - a + st - 1) // st)
        t = (tuple(out), v[1][1])
        j = lambda xs: ", ".join(map(str, xs))
        return self.emit("slice", [v[0]], lambda o, a=start, b=limit,
                         c=strides: "tessel.slice %s, start = [%s], limit = "
                         "[%s], strides = [%s]" % (o[0], j(a), j(b), j(c)),
                         " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_concat(self):
        r = self.rng
        v = self.pick(lambda t: len(t[0]) >= 1,
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = v[1][0]
        d = r.randrange(len(s))
        ins = [v]
        for _ in range(r.randint(1, 2)):
            c = [w for w in self.pool if w[1][1] == v[1][1] and
                 len(w[1][0]) == len(s) and all(
                     w[1][0][i] == s[i] for i in range(len(s)) if i != d)]
            if r.random() < 0.3:
                ins.append(v)       # the same value twice
            elif c and r.random() < 0.7:
                ins.append(r.choice(c))
            else:
                ns = list(s)
                ns[d] = self.dim()
                t = (tuple(ns), v[1][1])
                ins.append((self.new_arg(t), t))
        out = list(s)
        out[d] = sum(w[1][0][d] for w in ins)
        t = (tuple(out), v[1][1])
        return self.emit("concatenate", [w[0] for w in ins], lambda o, d=d:
                         "tessel.concatenate %s dim = %d" % (", ".join(o), d),
                         " : (%s) -> %s" % (", ".join(tstr(w[1]) for w in ins),
                                            tstr(t)), t)

    def op_pad(self):
        r = self.rng
        v = self.pick_float(1)
        s = v[1][0]
        lo = [r.choice([0, 0, 1, 2]) for _ in s]
        hi = [r.choice([0, 0, 1, 3]) for _ in s]
        t = (tuple(x + lo[i] + hi[i] for i, x in enumerate(s)), v[1][1])
        val = r.choice(["0.0", "1.5", "-2.5"])
        j = lambda xs: ", ".join(map(str, xs))
        return self.emit("pad", [v[0]], lambda o, lo=lo, hi=hi, val=val:
                         "tessel.pad %s, low = [%s], high = [%s], value = %s"
                         % (o[0], j(lo), j(hi), val),
                         " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_dot(self):
        r = self.rng
        dt = self.p.dtype
        lhs = self.pick_float(1, 4)
        ls = lhs[1][0]
        rank = len(ls)
        dims = list(range(rank))
        r.shuffle(dims)
        if r.random() < 0.3:
            # A contraction of a value with itself (x . x): dims paired with
            # dims of the same size, in any order.
            nb = r.randint(0, rank)
            batch_l = dims[:nb]
            rest = dims[nb:]
            nc = r.randint(0, len(rest))
            con_l = rest[:nc]
            pairs_b = [(d, d) for d in batch_l]
            pairs_c = [(d, d) for d in con_l]
            # Sometimes pair contracting dims crosswise when sizes match.
            if len(con_l) >= 2 and ls[con_l[0]] == ls[con_l[1]] and \
                    r.random() < 0.5:
                pairs_c[0] = (con_l[0], con_l[1])
                pairs_c[1] = (con_l[1], con_l[0])
            free = rank - nb - nc
            if nb + 2 * free > 5:
                return None
            rhs = lhs
            rs = ls
        else:
            nb = r.randint(0, min(2, rank))
            batch_l = dims[:nb]
            rest = dims[nb:]
            nc = r.randint(0 if rest else 0, min(3, len(rest)))
            con_l = rest[:nc]
            nfree_r = r.randint(0, 2)
            if nb + (rank - nb - nc) + nfree_r > 5:
                nfree_r = 0
            if nb + (rank - nb - nc) + nfree_r > 5:
                return None
            kinds = [("b", d) for d in batch_l] + [("c", d) for d in con_l] \
                + [("f", None)] * nfree_r
            r.shuffle(kinds)
            rs, pairs_b, pairs_c = [], [], []
            for i, (k, d) in enumerate(kinds):
                if k == "f":
                    rs.append(self.dim())
                else:
                    rs.append(ls[d])
                    (pairs_b if k == "b" else pairs_c).append((d, i))
            r.shuffle(pairs_b)
            r.shuffle(pairs_c)
            rt = (tuple(rs), dt)
            cands = [w for w in self.pool if w[1] == rt]
            rhs = r.choice(cands) if cands and r.random() < 0.5 else \
                (self.new_arg(rt), rt)
        bl = [a for a, _ in pairs_b]
        br = [b for _, b in pairs_b]
        cl = [a for a, _ in pairs_c]
        cr = [b for _, b in pairs_c]
        out = [ls[d] for d in bl] + \
            [ls[d] for d in range(rank) if d not in bl and d not in cl] + \
            [rs[d] for d in range(len(rs)) if d not in br and d not in cr]
        t = (tuple(out), dt)
        j = lambda xs: ", ".join(map(str, xs))
        return self.emit("dot_general", [lhs[0], rhs[0]],
                         lambda o, bl=bl, br=br, cl=cl, cr=cr:
                         "tessel.dot_general %s, %s, batching = [%s] x [%s], "
                         "contracting = [%s] x [%s]" % (
                             o[0], o[1], j(bl), j(br), j(cl), j(cr)),
                         " : (%s, %s) -> %s" % (tstr(lhs[1]), tstr(rhs[1]),
                                                tstr(t)), t)

    def op_reduce(self):
        r = self.rng
        if r.random() < 0.15:
            v = self.pick(lambda t: t[1] == "i32" and len(t[0]) >= 1)
        else:
            v = None
        v = v or self.pick_float(1)
        s = v[1][0]
        dims = sorted(r.sample(range(len(s)), r.randint(1, len(s))))
        kinds = ["sum", "max", "min"] + (["mean"] if v[1][1] in FLOATS
                                         else [])
        k = r.choice(kinds)
        t = (tuple(d for i, d in enumerate(s) if i not in dims), v[1][1])
        return self.emit("reduce", [v[0]], lambda o, k=k, dims=dims:
                         "tessel.reduce %s %s, dims = [%s]" % (
                             k, o[0], ", ".join(map(str, dims))),
                         " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)

    def op_cumsum(self):
        v = self.pick(lambda t: len(t[0]) >= 1 and t[1] in FLOATS + ("i32",),
                      lambda: (self.shape(1, 3), self.p.dtype))
        d = self.rng.randrange(len(v[1][0]))
        return self.emit("cumsum", [v[0]], lambda o, d=d:
                         "tessel.cumsum %s, dim = %d" % (o[0], d),
                         " : " + tstr(v[1]), v[1])

    def op_softmax(self):
        v = self.pick_float(1)
        d = self.rng.randrange(len(v[1][0]))
        return self.emit("softmax", [v[0]], lambda o, d=d:
                         "tessel.softmax %s, dim = %d" % (o[0], d),
                         " : " + tstr(v[1]), v[1])

    def vec(self, n):
        t = ((n,), self.p.dtype)
        c = [w for w in self.pool if w[1] == t]
        if c and self.rng.random() < 0.4:
            return self.rng.choice(c)[0]
        return self.new_arg(t)

    def op_norm(self):
        v = self.pick_float(1)
        n = v[1][0][-1]
        g = self.vec(n)
        if self.rng.random() < 0.5:
            b = g if self.rng.random() < 0.3 else self.vec(n)
            return self.emit("layer_norm", [v[0], g, b], lambda o:
                             "tessel.layer_norm %s, %s, %s, epsilon = 1.0e-05"
                             % tuple(o), " : %s, %s" % (
                                 tstr(v[1]), tstr(((n,), v[1][1]))), v[1])
        return self.emit("rms_norm", [v[0], g], lambda o:
                         "tessel.rms_norm %s, %s, epsilon = 1.0e-06" %
                         tuple(o), " : %s, %s" % (tstr(v[1]),
                                                  tstr(((n,), v[1][1]))), v[1])

    def indices(self, shape, n, allow_oob=True):
        init = "int:0:%d" % n
        if n == 0:
            init = "int:-1:1"   # every index is out of range of an empty axis
        elif allow_oob and self.rng.random() < 0.3:
            init = "int:-1:%d" % (n + 2)
        return self.new_arg((tuple(shape), "i32"), init=init)

    def op_gather(self):
        r = self.rng
        v = self.pick(lambda t: len(t[0]) >= 1 and len(t[0]) <= 3 and
                      t[1] != "i1",
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = v[1][0]
        axis = r.randrange(len(s))
        ishape = self.shape(0, 2)
        idx = self.indices(ishape, s[axis])
        t = (tuple(s[:axis]) + ishape + tuple(s[axis + 1:]), v[1][1])
        if len(t[0]) > 5:
            return None
        return self.emit("gather", [v[0], idx], lambda o, a=axis:
                         "tessel.gather %s[%s], axis = %d" % (o[0], o[1], a),
                         " : (%s, %s) -> %s" % (tstr(v[1]),
                                                tstr((ishape, "i32")),
                                                tstr(t)), t)

    def op_scatter(self):
        r = self.rng
        v = self.pick(lambda t: 1 <= len(t[0]) <= 3 and t[1] in FLOATS,
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = v[1][0]
        axis = r.randrange(len(s))
        ishape = self.shape(0, 2)
        idx = self.indices(ishape, s[axis])
        ut = (tuple(s[:axis]) + ishape + tuple(s[axis + 1:]), v[1][1])
        if len(ut[0]) > 5:
            return None
        c = [w for w in self.pool if w[1] == ut]
        u = r.choice(c)[0] if c and r.random() < 0.6 else self.new_arg(ut)
        return self.emit("scatter_add", [v[0], idx, u], lambda o, a=axis:
                         "tessel.scatter_add %s[%s], %s, axis = %d" % (
                             o[0], o[1], o[2], a),
                         " : (%s, %s, %s) -> %s" % (
                             tstr(v[1]), tstr((ishape, "i32")), tstr(ut),
                             tstr(v[1])), v[1])

    def op_one_hot(self):
        r = self.rng
        c = [w for w in self.pool if w[1][1] == "i32" and len(w[1][0]) <= 2]
        depth = r.choice([1, 2, 3, 4, 5, 8])
        if c and r.random() < 0.5:
            idx, it = r.choice(c)
        else:
            it = (self.shape(0, 2), "i32")
            idx = self.indices(it[0], depth)
        t = (tuple(it[0]) + (depth,), self.p.dtype)
        return self.emit("one_hot", [idx], lambda o: "tessel.one_hot %s" %
                         o[0], " : (%s) -> %s" % (tstr(it), tstr(t)), t)

    def op_iota(self):
        s = self.shape(1, 3)
        d = self.rng.randrange(len(s))
        t = (s, self.rng.choice(["i32", self.p.dtype]))
        return self.emit("iota", [], lambda o, d=d: "tessel.iota dim = %d" % d,
                         " : " + tstr(t), t)

    def op_constant(self):
        s = self.shape(0, 2)
        t = (s, self.p.dtype)
        val = self.rng.choice(["0.5", "-1.0", "2.0"])
        return self.emit("constant", [], lambda o, val=val:
                         "tessel.constant dense<%s>" % val,
                         " : " + tstr(t), t)

    def op_top_k(self):
        v = self.pick(lambda t: 1 <= len(t[0]) and t[1] in FLOATS + ("i32",),
                      lambda: (self.shape(1, 3), self.p.dtype))
        s = v[1][0]
        if s[-1] < 1:
            return None
        k = self.rng.randint(1, s[-1])
        vt = (tuple(s[:-1]) + (k,), v[1][1])
        it = (vt[0], "i32")
        base = self.fresh()
        op = Op([(base + "#0", vt), (base + "#1", it)], [v[0]],
                lambda o, k=k: "tessel.top_k %s, k = %d" % (o[0], k),
                " : (%s) -> (%s, %s)" % (tstr(v[1]), tstr(vt), tstr(it)),
                "top_k")
        self.p.ops.append(op)
        self.pool.append((base + "#0", vt))
        self.pool.append((base + "#1", it))
        return base + "#0"

    def op_dropout(self):
        seed = self.new_arg(((), "i64"), init="int:0:1000", annotate=False)
        t = (self.shape(1, 3), self.p.dtype)
        rate = self.rng.choice(["0.0", "0.25", "0.5"])
        return self.emit("dropout_mask", [seed], lambda o, rate=rate:
                         "tessel.dropout_mask %s, rate = %s" % (o[0], rate),
                         " : (tensor<i64>) -> " + tstr(t), t)

    def op_cross_entropy(self):
        r = self.rng
        v = self.pick_float(1, 3)
        s = v[1][0]
        lt = (tuple(s[:-1]), "i32")
        ign = r.choice([-100, -1, 0])
        lab = self.indices(lt[0], s[-1])
        red = r.choice(["mean", "sum", "none"])
        t = (lt[0] if red == "none" else (), v[1][1])
        return self.emit("softmax_cross_entropy", [v[0], lab],
                         lambda o, ign=ign, red=red:
                         "tessel.softmax_cross_entropy %s, %s, ignore_index = "
                         "%d, reduction = %s" % (o[0], o[1], ign, red),
                         " : (%s, %s) -> %s" % (tstr(v[1]), tstr(lt), tstr(t)),
                         t)

    def op_constraint(self):
        v = self.pick(lambda t: True, lambda: (self.shape(1, 3),
                                               self.p.dtype))
        if not self.p.mesh:
            return None
        sh = self.sharding(v[1][0], dense=True)
        body = sh[len("#tessel.sharding<"):-1]
        res = self.fresh()
        op = Op([(res, v[1])], [v[0]], lambda o, b=body:
                "tessel.sharding_constraint %s <%s>" % (o[0], b),
                " : " + tstr(v[1]), "sharding_constraint")
        self.p.ops.append(op)
        self.annots.setdefault(res, []).append(sh)
        self.pool.append((res, v[1]))
        return res

    KINDS = [("unary", 8), ("binary", 10), ("select", 3), ("convert", 3),
             ("broadcast", 5), ("reshape", 6), ("transpose", 4),
             ("slice", 4), ("concat", 3), ("pad", 3), ("dot", 12),
             ("reduce", 8), ("cumsum", 2), ("softmax", 3), ("norm", 3),
             ("gather", 3), ("scatter", 2), ("one_hot", 2), ("iota", 1),
             ("constant", 1), ("top_k", 2), ("dropout", 1),
             ("cross_entropy", 3), ("constraint", 8)]

    def step(self):
        kinds, weights = zip(*self.KINDS)
        k = self.rng.choices(kinds, weights)[0]
        return getattr(self, "op_" + k)()

    # -- program ------------------------------------------------------------
    def program(self):
        r = self.rng
        for _ in range(r.randint(1, 3)):
            self.new_arg((self.shape(1, 3), self.p.dtype))
        for _ in range(r.randint(1, 12)):
            self.step()
        ops_vals = [v for o in self.p.ops for v in o.results]
        rets = []
        if self.p.grad:
            fl = [v for v in ops_vals if v[1][1] == self.p.dtype] or \
                [v for v in self.pool if v[1][1] == self.p.dtype]
            v = r.choice(fl[-3:])
            s = v[1][0]
            if s:
                if r.random() < 0.3:
                    v = (self.emit("mul", [v[0], v[0]], lambda o:
                                   "tessel.mul %s, %s" % (o[0], o[1]),
                                   " : " + tstr(v[1]), v[1]), v[1])
                t = ((), v[1][1])
                k = r.choice(["sum", "sum", "mean", "max"])
                loss = self.emit("reduce", [v[0]], lambda o, k=k, n=len(s):
                                 "tessel.reduce %s %s, dims = [%s]" % (
                                     k, o[0], ", ".join(map(str, range(n)))),
                                 " : (%s) -> %s" % (tstr(v[1]), tstr(t)), t)
                v = (loss, t)
            rets.append(v)
            ops_vals = [v for o in self.p.ops for v in o.results]
        live = [v for v in ops_vals if v[1][1] != "i64"] or self.pool
        for _ in range(r.randint(1, 3)):
            c = r.random()
            if rets and c < 0.15:
                rets.append(r.choice(rets))             # returned twice
            elif c < 0.22:
                rets.append(r.choice(self.pool))         # maybe an argument
            else:
                rets.append(r.choice(live[-5:]))
        self.p.rets = []
        for i, (name, t) in enumerate(rets):
            shard = None
            if self.p.mesh and r.random() < 0.3 and not (self.p.grad and
                                                         i == 0):
                shard = self.sharding(t[0])
                if any(not compatible(shard, a) for a in
                       self.annots.get(name, [])):
                    shard = None    # documented error: both cannot hold
                else:
                    self.annots.setdefault(name, []).append(shard)
            self.p.rets.append(dict(value=name, type=t, tname="r%d" % i,
                                    sharding=shard))
        if self.p.grad:
            self.p.rets[0]["tname"] = "loss"
        return self.p


# ---------------------------------------------------------------------------
# Running the tools
# ---------------------------------------------------------------------------

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
        kind, rc, out = self.run([self.tool("tessel-opt"), src,
                                  "--tessel-propagate", "-o", "p.mlir"], cwd)
        cmd = "tessel-opt %s --tessel-propagate -o p.mlir" % src
        if kind != "ok":
            return Result({"fail": "refused"}.get(kind, kind), "propagate",
                          out, cmd)
        bad = self.roundtrip(os.path.join(cwd, "p.mlir"), cwd, "propagate")
        if bad:
            return bad
        kind, rc, out = self.run([self.tool("tessel-opt"), "p.mlir",
                                  "--tessel-partition", "-o", "q.mlir"], cwd)
        cmd = "tessel-opt p.mlir --tessel-partition -o q.mlir"
        if kind != "ok":
            return Result({"fail": "refused"}.get(kind, kind), "partition",
                          out, cmd)
        bad = self.roundtrip(os.path.join(cwd, "q.mlir"), cwd, "partition")
        if bad:
            return bad
        outs = [("q.mlir", "partition")]
        if optimize:
            kind, rc, out = self.run([self.tool("tessel-opt"), "q.mlir",
                                      "--tessel-optimize-collectives", "-o",
                                      "o.mlir"], cwd)
            cmd = "tessel-opt q.mlir --tessel-optimize-collectives -o o.mlir"
            if kind != "ok":
                return Result({"fail": "refused"}.get(kind, kind), "optimize",
                              out, cmd)
            bad = self.roundtrip(os.path.join(cwd, "o.mlir"), cwd, "optimize")
            if bad:
                return bad
            outs.append(("o.mlir", "optimize"))
        for path, stage in outs:
            cmd = ("tessel-interp %s --func %s --seed %d --expect ref.st "
                   "--rtol %s --atol %s" % (path, func, seed, rtol, atol))
            kind, rc, out = self.run([self.tool("tessel-interp"), path,
                                      "--func", func, "--expect", "ref.st",
                                      "--rtol", rtol, "--atol", atol] + seeds,
                                     cwd)
            if kind == "fail":
                if "MISMATCH" in out or "missing" in out:
                    return Result("wrong", stage, "\n".join(
                        l for l in out.splitlines() if "MISMATCH" in l or
                        "missing" in l), cmd)
                return Result("invalid", stage + "-interp", out, cmd)
            if kind != "ok":
                return Result(kind, stage + "-interp", out, cmd)
        if compile_:
            return self.compile(src, func, cwd, rtol, atol)
        return Result("ok")

    def compile(self, src, func, cwd, rtol, atol):
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
        kind, rc, out = self.run([self.tool("tessel-interp"), src, "--func",
                                  func, "--expect", "out.st", "--rtol", rtol,
                                  "--atol", atol], cwd)
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
        for i in range(o.count):
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
        jobs = []

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
            results = ex.map(task, range(o.count))
        else:
            results = map(task, range(o.count))
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
