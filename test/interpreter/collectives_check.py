#!/usr/bin/env python3
"""Checks the interpreter's collectives against an independent model.

For meshes of 1, 2 and 3 axes and every list of group axes (every subset, in
mesh order and reversed), runs each collective as a tessel.spmd program in
tessel-interp and compares the reassembled global output with what a plain
Python model of the semantics in TesselOps.td computes:
  * devices are numbered row-major over the mesh axes;
  * a collective over axes A runs among devices sharing every other
    coordinate; a device's group index is row-major over its coordinates on
    A in the listed order;
  * a dimension sharded over axes (a, b) is cut into size(a)*size(b) blocks;
    a device holds the block whose index is row-major over its (a, b).
Every device's input block differs, so any mix-up of members shows.

With --compile, each program is compiled by tessel-compile and run as an
executable instead (threads, or MPI processes with --mpi); --ops picks the
collectives, and --placed gives each mesh a device list (positions on ranks
in reverse), which must not change any result.
"""
import argparse
import itertools
import os
import subprocess
import sys

import numpy as np


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from safetensors_io import read_arrays as read_safetensors  # noqa: E402
from safetensors_io import write_safetensors  # noqa: E402


def parse_ref(a):
    """'x' -> ('x', None, None); 'x:(k)m' (a sub-axis) -> ('x', k, m)."""
    if ":" not in a:
        return a, None, None
    name, rest = a.split(":")
    k, m = rest[1:].split(")")
    return name, int(k), int(m)


class Mesh:
    def __init__(self, axes, sub_axis_cases=None):
        self.names = [a for a, _ in axes]
        self.sizes = [s for _, s in axes]
        self.n = int(np.prod(self.sizes))
        self.sub_axis_cases = sub_axis_cases

    def coords(self, d):
        c = []
        for s in reversed(self.sizes):
            c.append(d % s)
            d //= s
        return list(reversed(c))

    def device(self, c):
        d = 0
        for x, s in zip(c, self.sizes):
            d = d * s + x
        return d

    def ref(self, a):
        """(axis index, weight of its digit, size) of an axis or sub-axis:
        sub-axis (k)m of an axis of n devices is the digit of weight
        n/(k*m) of the axis coordinate."""
        name, k, m = parse_ref(a)
        i = self.names.index(name)
        n = self.sizes[i]
        return (i, 1, n) if k is None else (i, n // (k * m), m)

    def digit(self, d, a):
        i, w, m = self.ref(a)
        return self.coords(d)[i] // w % m

    def index(self, d, axes):
        g = 0
        for a in axes:
            g = g * self.ref(a)[2] + self.digit(d, a)
        return g

    def size(self, axes):
        return int(np.prod([self.ref(a)[2] for a in axes]))

    def residual(self, d, axes):
        """d's coordinates with the digits `axes` cover set to zero."""
        c = self.coords(d)
        for a in axes:
            i, w, _ = self.ref(a)
            c[i] -= self.digit(d, a) * w
        return c

    def group(self, d, axes):
        members = [None] * self.size(axes)
        for e in range(self.n):
            if self.residual(e, axes) == self.residual(d, axes):
                members[self.index(e, axes)] = e
        return members

    def complement(self, axes):
        """The axes and sub-axes `axes` leave out, major to minor."""
        rest = []
        for i, (name, n) in enumerate(zip(self.names, self.sizes)):
            covered = sorted((k, k * m) for a in axes
                             for nm, k, m in [parse_ref(a)] if nm == name
                             for k, m in [(k or 1, m or n)])
            pre = 1
            for lo, hi in covered + [(n, n)]:
                if lo > pre:
                    rest.append(name if (pre, lo) == (1, n)
                                else "%s:(%d)%d" % (name, pre, lo // pre))
                pre = max(pre, hi)
        return rest


def quoted(a):
    """An axis as a sharding writes it: "x" or "x":(k)m."""
    name, k, m = parse_ref(a)
    return '"%s"' % name if k is None else '"%s":(%d)%d' % (name, k, m)


def sharding(mesh_name, dims):
    body = ", ".join("{" + ", ".join(quoted(a) for a in axes) + "}"
                     for axes in dims)
    return "#tessel.sharding<@%s, [%s]>" % (mesh_name, body)


def program(mesh, op_text, in_shape, out_shape, out_dims, out_type="f32",
            placed=False, overlapped=False):
    mesh_decl = ", ".join('"%s"=%d' % (a, s)
                          for a, s in zip(mesh.names, mesh.sizes))
    if placed:
        mesh_decl += "] devices = [" + ", ".join(
            str(d) for d in reversed(range(mesh.n)))
    t_in = "tensor<%sxf32>" % "x".join(map(str, in_shape))
    t_out = "tensor<%sx%s>" % ("x".join(map(str, out_shape)), out_type)
    body = op_text.replace("T_IN", t_in).replace("T_OUT", t_out)
    extra_type, extra_value = "", ""
    if overlapped:
        # Compute between the collective and the return, whose result is
        # returned too (and not checked): the compiled program starts the
        # collective, computes, then waits for it.
        body += "\n  %%e = tessel.exp %%x : %s" % t_in
        extra_type = ", %s {tessel.sharding = %s}" % (
            t_in, sharding("m", [mesh.names, []]))
        extra_value = ", %e"
    results = "%s {tessel.sharding = %s}%s" % (t_out, sharding("m", out_dims),
                                              extra_type)
    types = t_out + (", " + t_in if overlapped else "")
    return (
        "tessel.mesh @m [%s]\n"
        "func.func @f(%%x: %s {tessel.sharding = %s}) -> (%s) attributes "
        "{tessel.spmd = @m} {\n%s\n  return %%r%s : %s\n}\n"
        % (mesh_decl, t_in, sharding("m", [mesh.names, []]), results, body,
           extra_value, types))


def place(mesh, out_dims, per_device, global_shape):
    """Assembles per-device blocks into the global tensor (independently)."""
    out = np.zeros(global_shape, dtype=per_device[0].dtype)
    for d, block in enumerate(per_device):
        sl = []
        for k, axes in enumerate(out_dims):
            b = mesh.index(d, axes)
            sl.append(slice(b * block.shape[k], (b + 1) * block.shape[k]))
        out[tuple(sl)] = block
    return out


def cases(mesh):
    if mesh.sub_axis_cases:
        yield from mesh.sub_axis_cases
        return
    for r in range(1, len(mesh.names) + 1):
        for subset in itertools.combinations(mesh.names, r):
            orders = [list(subset)]
            if len(subset) > 1:
                orders.append(list(reversed(subset)))
            for axes in orders:
                yield axes


def run_case(opts, base, devices):
    """Runs case `base` (.mlir, .in) and writes its result to base.out."""
    if not opts.compile:
        return subprocess.run([opts.tool, base + ".mlir", "--inputs",
                               base + ".in", "--save", base + ".out"],
                              capture_output=True, text=True)
    res = subprocess.run([opts.compile, base + ".mlir", "--entry", "f", "-o",
                          base], capture_output=True, text=True)
    if res.returncode != 0:
        return res
    cmd = [base, "--steps", "1", "--init-from", base + ".in", "--save",
           base + ".out"]
    if opts.mpi:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
               str(devices)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", help="tessel-interp (unless --compile)")
    p.add_argument("--out", required=True)
    p.add_argument("--compile", metavar="TESSEL_COMPILE",
                   help="compile each case and run the executable")
    p.add_argument("--mpi", action="store_true",
                   help="with --compile: run under mpirun")
    p.add_argument("--placed", action="store_true",
                   help="give each mesh a reversed device list")
    p.add_argument("--overlapped", action="store_true",
                   help="compute between each collective and the return "
                        "(compiled: a split start and wait)")
    p.add_argument("--ops", help="comma-separated op names to check")
    p.add_argument("--meshes", default="0,1,2",
                   help="which meshes: 0 (x=4), 1 (x=2, y=3), 2 (2x2x2); "
                   "with sub-axes: 3 (x=8), 4 (x=4, y=2)")
    opts = p.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    meshes = [Mesh([("x", 4)]), Mesh([("x", 2), ("y", 3)]),
              Mesh([("a", 2), ("b", 2), ("c", 2)]),
              Mesh([("x", 8)], [["x:(1)2"], ["x:(2)4"], ["x:(2)2"],
                                ["x:(4)2", "x:(1)2"], ["x:(1)4"],
                                ["x:(1)2", "x:(4)2"]]),
              Mesh([("x", 4), ("y", 2)], [["y", "x:(2)2"], ["x:(1)2"],
                                          ["x:(2)2", "y"]])]
    meshes = [meshes[int(i)] for i in opts.meshes.split(",")]
    passed = failed = 0
    rng = np.random.default_rng(0)
    for mesh in meshes:
        for axes in cases(mesh):
            n = mesh.size(axes)
            rest = mesh.complement(axes)
            cols = 2 * n
            X = rng.standard_normal((2 * mesh.n, cols)).astype(np.float32)
            local = [X[2 * d:2 * d + 2] for d in range(mesh.n)]
            alist = "[" + ", ".join('"%s"' % a for a in axes) + "]"
            tests = []
            for kind, fn in (("sum", np.sum), ("max", np.max),
                             ("min", np.min)):
                per = [fn(np.stack([local[m] for m in mesh.group(d, axes)]),
                          axis=0) for d in range(mesh.n)]
                tests.append(("all_reduce %s" % kind,
                              "  %%r = tessel.all_reduce %s %%x on @m %s : "
                              "T_IN" % (kind, alist),
                              [2, cols], [rest, []], per))
            for dim in (0, 1):
                per = [np.concatenate([local[m] for m in mesh.group(d, axes)],
                                      axis=dim) for d in range(mesh.n)]
                shape = [2 * n, cols] if dim == 0 else [2, cols * n]
                tests.append(("all_gather dim %d" % dim,
                              "  %%r = tessel.all_gather %%x on @m %s, dim = "
                              "%d : (T_IN) -> T_OUT" % (alist, dim),
                              shape, [rest, []], per))
            per = []
            for d in range(mesh.n):
                total = np.sum(np.stack([local[m]
                                         for m in mesh.group(d, axes)]), 0)
                g, w = mesh.index(d, axes), cols // n
                per.append(total[:, g * w:(g + 1) * w])
            tests.append(("reduce_scatter", "  %%r = tessel.reduce_scatter "
                          "sum %%x on @m %s, dim = 1 : (T_IN) -> T_OUT" % alist,
                          [2, cols // n], [mesh.names, []], per))
            per = []
            for d in range(mesh.n):
                g, w = mesh.index(d, axes), cols // n
                per.append(np.concatenate(
                    [local[m][:, g * w:(g + 1) * w]
                     for m in mesh.group(d, axes)], axis=0))
            tests.append(("all_to_all", "  %%r = tessel.all_to_all %%x on @m "
                          "%s, split_dim = 1, concat_dim = 0 : (T_IN) -> "
                          "T_OUT" % alist, [2 * n, cols // n],
                          [mesh.names, []], per))
            for name, pairs in (("shift", [(i, (i + 1) % n) for i in range(n)]),
                                ("partial", [(0, n - 1)])):
                per = []
                for d in range(mesh.n):
                    g, members = mesh.index(d, axes), mesh.group(d, axes)
                    src = [s for s, t in pairs if t == g]
                    per.append(local[members[src[0]]] if src
                               else np.zeros_like(local[d]))
                text = ", ".join("%d -> %d" % st for st in pairs)
                tests.append(("collective_permute %s" % name,
                              "  %%r = tessel.collective_permute %%x on @m "
                              "%s, pairs = [%s] : T_IN" % (alist, text),
                              [2, cols], [mesh.names, []], per))
            per = []
            for d in range(mesh.n):
                g, w = mesh.index(d, axes), cols // n
                per.append(local[d][:, g * w:(g + 1) * w])
            tests.append(("shard_slice", "  %%r = tessel.shard_slice %%x on "
                          "@m %s, dim = 1 : (T_IN) -> T_OUT" % alist,
                          [2, cols // n], [mesh.names, []], per))
            per = [np.array([mesh.index(d, axes)], dtype=np.int32)
                   for d in range(mesh.n)]
            tests.append(("axis_index", "  %%i = tessel.axis_index on @m %s :"
                          " tensor<i32>\n  %%r = tessel.broadcast_in_dim %%i, "
                          "dims = [] : (tensor<i32>) -> T_OUT" % alist,
                          [1], [mesh.names], per))
            if opts.ops:
                keep = opts.ops.split(",")
                tests = [t for t in tests if t[0].split()[0] in keep]
            for title, op_text, out_shape, out_dims, per in tests:
                label = "%s %s over %s" % (
                    "x".join("%s=%d" % t for t in zip(mesh.names, mesh.sizes)),
                    title, ",".join(axes))
                out_type = "i32" if title == "axis_index" else "f32"
                text = program(mesh, op_text, [2, cols], out_shape, out_dims,
                               out_type, opts.placed, opts.overlapped)
                base = os.path.join(opts.out, "case%d" % (passed + failed))
                with open(base + ".mlir", "w") as f:
                    f.write(text)
                write_safetensors(base + ".in", {"arg0": X})
                res = run_case(opts, base, mesh.n)
                gshape = [out_shape[k] * mesh.size(out_dims[k])
                          for k in range(len(out_shape))]
                expected = place(mesh, out_dims, per, gshape)
                if res.returncode != 0:
                    print("FAIL %s: %s" % (label, res.stderr.strip()))
                    failed += 1
                    continue
                got = read_safetensors(base + ".out")["result0"]
                if got.shape != expected.shape or not np.allclose(
                        got, expected, rtol=1e-6, atol=1e-6):
                    print("FAIL %s: got %s expected %s" % (label, got,
                                                           expected))
                    failed += 1
                else:
                    print("ok %s" % label)
                    passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
