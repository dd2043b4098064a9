#!/usr/bin/env python3
"""An element-wise chain of N ops over ARGS arguments (issue 13 item 11's
shapes): tanh, mul by an argument, add of the two previous values, so every
value has two readers and fusion cannot fold the chain into one loop.
Usage: gen_chain.py N ARGS > chain.mlir"""
import sys

n, args = int(sys.argv[1]), int(sys.argv[2])
T = "tensor<64x64xf32>"
print("module {")
print("  func.func @chain(" + ", ".join(f"%a{i}: {T}" for i in range(args))
      + f") -> {T} {{")
print(f"    %v0 = tessel.tanh %a0 : {T}")
print(f"    %v1 = tessel.tanh %a{1 % args} : {T}")
for i in range(2, n):
    kind = i % 3
    if kind == 0:
        print(f"    %v{i} = tessel.add %v{i-1}, %v{i-2} : {T}")
    elif kind == 1:
        print(f"    %v{i} = tessel.mul %v{i-1}, %a{i % args} : {T}")
    else:
        print(f"    %v{i} = tessel.tanh %v{i-1} : {T}")
print(f"    return %v{n-1} : {T}")
print("  }")
print("}")
