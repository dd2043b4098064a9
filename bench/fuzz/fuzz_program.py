"""The fuzzer's program representation (bench/fuzz/fuzz.py): ops, tensor
types, shardings, and printing a program as tessel MLIR."""
import re

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
        # A sub-axis "a:(k)m" is written "a":(k)m.
        body = ", ".join('"%s"' % a.partition(":")[0] +
                         (":" + a.partition(":")[2] if ":" in a else "")
                         for a in axes)
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
        dims.append(([s.replace('"', "") for s in items if s != "?"],
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
