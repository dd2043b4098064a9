#!/usr/bin/env python3
"""Emits an N-layer chain of matmul + bias add, annotated only at the input
(batch over the first mesh axis), in the tessel dialect or as the equivalent
linalg program with upstream shard annotations (for mlir-opt's
sharding-propagation)."""
import argparse
import sys


def tessel(n, b, h):
    out = ['tessel.mesh @mesh ["dp"=2, "tp"=4]']
    args = ['%%x: tensor<%dx%dxf32> {tessel.sharding = '
            '#tessel.sharding<@mesh, [{"dp"}, {}]>}' % (b, h)]
    for i in range(n):
        args.append("%%w%d: tensor<%dx%dxf32>" % (i, h, h))
        args.append("%%b%d: tensor<%dxf32>" % (i, h))
    out.append("func.func @chain(%s) -> tensor<%dx%dxf32> {" % (
        ", ".join(args), b, h))
    cur = "%x"
    t = "tensor<%dx%dxf32>" % (b, h)
    for i in range(n):
        out.append("  %%m%d = tessel.dot_general %s, %%w%d, batching = [] x [],"
                   " contracting = [1] x [0] : (%s, tensor<%dx%dxf32>) -> %s"
                   % (i, cur, i, t, h, h, t))
        out.append("  %%c%d = tessel.broadcast_in_dim %%b%d, dims = [1] : "
                   "(tensor<%dxf32>) -> %s" % (i, i, h, t))
        out.append("  %%y%d = tessel.add %%m%d, %%c%d : %s" % (i, i, i, t))
        cur = "%%y%d" % i
    out.append("  return %s : %s" % (cur, t))
    out.append("}")
    return "\n".join(out) + "\n"


def linalg(n, b, h):
    t = f"tensor<{b}x{h}xf32>"
    w = f"tensor<{h}x{h}xf32>"
    args = [f"%x: {t}"]
    for i in range(n):
        args += [f"%w{i}: {w}", f"%b{i}: {t}"]
    out = ["shard.grid @grid(shape = 2x4)",
           f"func.func @chain({', '.join(args)}) -> {t} {{",
           "  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding",
           f"  %xs = shard.shard %x to %s0 : {t}",
           "  %zero = arith.constant 0.0 : f32",
           f"  %init = tensor.empty() : {t}",
           f"  %acc = linalg.fill ins(%zero : f32) outs(%init : {t}) -> {t}"]
    cur = "%xs"
    for i in range(n):
        out.append(f"  %m{i} = linalg.matmul ins({cur}, %w{i} : {t}, {w}) "
                   f"outs(%acc : {t}) -> {t}")
        out.append(f"  %y{i} = linalg.add ins(%m{i}, %b{i} : {t}, {t}) "
                   f"outs(%acc : {t}) -> {t}")
        cur = f"%y{i}"
    out += [f"  return {cur} : {t}", "}"]
    return "\n".join(out) + "\n"


p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, required=True)
p.add_argument("--dialect", choices=["tessel", "linalg"], default="tessel")
p.add_argument("--batch", type=int, default=64)
p.add_argument("--hidden", type=int, default=256)
o = p.parse_args()
sys.stdout.write((tessel if o.dialect == "tessel" else linalg)(
    o.layers, o.batch, o.hidden))
