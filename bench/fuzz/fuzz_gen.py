"""The fuzzer's generator (bench/fuzz/fuzz.py): random valid tessel
programs covering every op with a sharding rule, x.x, size-1 axes and dims,
multi-axis uneven shardings, constraints, dead ops and gradient programs."""

from fuzz_program import (AXIS_NAMES, FLOATS, Op, Program, compatible, nelems,
                          sharding_text, tstr)


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
            take, later = [], []
            while free and len(take) < 3 and r.random() < rate:
                a = free.pop()
                n = dict(self.p.mesh).get(a, 1)  # 1: already a sub-axis
                cuts = [p for p in range(2, n) if n % p == 0]
                if cuts and r.random() < 0.25:
                    # A sub-axis: the major or minor part of `a`; the other
                    # part stays free for another dimension.
                    p = r.choice(cuts)
                    parts = ["%s:(1)%d" % (a, p), "%s:(%d)%d" % (a, p, n // p)]
                    r.shuffle(parts)
                    a = parts[0]
                    later.append(parts[1])
                take.append(a)
            free = later + free
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
            u = r.random()
            if u < 0.4:
                a, b, st = 0, d, 1
            elif u < 0.6:
                # A small shift (a block's halo when the dimension is split).
                a = min(d, r.randint(0, 2))
                b = max(a, d - r.randint(0, 2))
                st = 1
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
