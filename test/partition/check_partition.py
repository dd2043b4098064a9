#!/usr/bin/env python3
"""Proves partitioning by equality: the partitioned program on N ranks (run
by tessel-interp, one thread per device) equals the unpartitioned one.

  --models: the reference models on the reference meshes (mlp, gpt, llama
    x dp=4, tp=4, dp=2 x tp=2, tp=2 with sequence parallelism, FSDP over
    dp=4, tp=3 uneven; gpt and llama with vocabulary 50257 on dp=2 x tp=4).
  --random N --seed S: N random programs (random meshes of 1-4 axes, random
    shapes including non-divisible ones, random annotations; the generator of
    test/passes/check_propagation.py); with --auto-shard, their shardings
    chosen by --tessel-auto-shard first (annotations kept as constraints or
    stripped, sometimes under a memory limit).
  --moe: as --models, for a Mixtral-shaped experts model on ep=2, ep=4,
    dp=2 x ep=2, ep on the dp devices (dp=4) and ep=2 x tp=2.
  --reshards N --seed S: N random reshards (an argument laid out one way
    returned laid out another, on 1-3 axes of sizes 1-4, uneven shapes):
    every plan of the reshard planner is run.
  --grad (with --models): differentiate each model first (--tessel-grad)
    and compare the loss and every parameter gradient of @forward_grad.
  --train OPTIONS (with --models): build @train_step (--tessel-train-step=
    OPTIONS) and compare new parameters, optimizer state, loss and norm
    (also on ZeRO-1 meshes: zero1, dp-tp-zero1);
    --train-steps N compares them after N steps (rtol 1e-4, atol 1e-6).
Each case: propagate, partition (optionally optimize collectives), run both
programs from the same seed, compare every output (f32: rtol 1e-6, atol
1e-7 for the models' losses; rtol 1e-5, atol 1e-7 for gradients; rtol 1e-4, atol 1e-5 for random programs, whose
values can grow large; --rtol/--atol override). --only selects cases by
MODEL:STRATEGY. Prints one line per case and "N passed, M failed".
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "passes"))
import check_propagation  # noqa: E402

MODELS = {
    "mlp": "mlp --layers 3 --hidden 16 --vocab 10 --batch 8",
    "gpt": "gpt --layers 2 --hidden 24 --heads 4 --vocab 50 --seq 8 --batch 4",
    "llama": "llama --layers 2 --hidden 32 --heads 4 --kv-heads 2 --vocab 50 "
             "--seq 8 --batch 4",
}
MESHES = [("dp=4", "dp"), ("tp=4", "tp"), ("dp=2,tp=2", "dp-tp"),
          ("tp=2", "tp-sp"), ("dp=4", "fsdp"), ("tp=3", "tp")]
# Mixtral-shaped experts (routing, capacity, losses) on expert-parallel
# meshes: ep alone, dp x ep, ep on the dp devices, ep x tp.
MOE = ("moe --layers 2 --hidden 16 --heads 2 --experts 4 --top-k 2 --ffn 32 "
       "--vocab 32 --seq 8 --batch 4")
MOE_MESHES = [("ep=2", "ep"), ("ep=4", "ep"), ("ep=3", "ep"), ("dp=2,ep=2", "dp-ep"),
              ("dp=4", "dp-ep-shared"), ("ep=2,tp=2", "ep-tp")]
# A train step also partitions its optimizer update: ZeRO-1/2 splits the
# optimizer state over dp while the parameters stay whole.
TRAIN_MESHES = MESHES + [("dp=4", "zero1"), ("dp=2,tp=2", "dp-tp-zero1"),
                         ("dp=4", "zero2"), ("dp=2,tp=2", "dp-tp-zero2")]


# What --tessel-auto-shard declines with a located diagnostic.
AUTO_SHARD_REFUSAL = re.compile(
    r":\d+:\d+: error: .*(whole mesh axes|gives it the annotated|"
    r"no sharding rule|per device\); hint|fits the axes)")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Checker:
    def __init__(self, opts):
        self.o = opts
        self.passed = self.failed = self.refused = 0
        self.tmp = tempfile.mkdtemp(prefix="tessel-partition-")
        self.passes = ["--tessel-partition"]
        if opts.optimize:
            self.passes.append("--tessel-optimize-collectives")

    def tool(self, name):
        return os.path.join(self.o.bin, name)

    def case(self, label, propagated_path, seed, rtol="1e-4", atol="1e-5"):
        part = propagated_path + ".part.mlir"
        r = run([self.tool("tessel-opt"), propagated_path, "-o", part] +
                self.passes)
        if r.returncode:
            return self.fail(label, "partition failed: " + r.stderr[-1500:])
        ref = propagated_path + ".ref"
        func = (["--func", "f"]
                if self.o.random or self.o.files or self.o.reshards else [])
        if self.o.grad:
            func = ["--func", "forward_grad"]
        if self.o.train:
            func = ["--func", "train_step"]
            if self.o.train_steps:
                func += ["--train-steps", str(self.o.train_steps)]
        r = run([self.tool("tessel-interp"), propagated_path, "--seed",
                 str(seed), "--save", ref] + func)
        if r.returncode:
            return self.fail(label, "reference run failed: " + r.stderr[-800:])
        cmd = [self.tool("tessel-interp"), part, "--seed", str(seed),
               "--expect", ref, "--rtol", rtol, "--atol", atol] + func
        r = run(cmd)
        if r.returncode:
            bad = [l for l in r.stdout.splitlines() if l.startswith("MISMATCH")]
            return self.fail(label, "\n".join(bad[:20]) or
                             (r.stdout + r.stderr)[-1500:])
        errs = re.findall(r"max abs err ([^,\s]+)", r.stdout)
        self.passed += 1
        print("ok %s: max abs err %s" % (label, max(errs, key=float)
                                         if errs else "-"))

    def fail(self, label, why):
        self.failed += 1
        print("FAIL %s: %s" % (label, why))

    def models(self):
        meshes = TRAIN_MESHES if self.o.train else MESHES
        cases = [(m, mesh, s) for m in MODELS for mesh, s in meshes]
        cases.append(("gpt-vocab50257", "dp=2,tp=4", "dp-tp"))
        cases.append(("llama-vocab50257", "dp=2,tp=4", "dp-tp"))
        if self.o.moe:
            cases = [("moe", mesh, s) for mesh, s in MOE_MESHES]
        if self.o.only:
            cases = [c for c in cases
                     if any(re.fullmatch(pattern, "%s:%s" % (c[0], c[2]))
                            for pattern in self.o.only.split(","))]
        big_vocab = {
            "gpt-vocab50257": "gpt --layers 1 --hidden 16 --heads 4 --vocab "
                              "50257 --seq 4 --batch 2",
            "llama-vocab50257": "llama --layers 1 --hidden 16 --heads 4 "
                                "--kv-heads 2 --vocab 50257 --seq 4 --batch 2",
        }
        for model, mesh, strategy in cases:
            flags = MODELS.get(model) or big_vocab.get(model) or MOE
            label = "%s %s %s" % (model, mesh, strategy)
            base = os.path.join(self.tmp, re.sub(r"\W", "_", label))
            r = run([self.tool("tessel-models")] + flags.split() +
                    ["--mesh", mesh, "--strategy", strategy, "-o",
                     base + ".mlir"])
            if r.returncode:
                self.fail(label, r.stderr)
                continue
            grad = ["--tessel-grad=func=forward"] if self.o.grad else []
            if self.o.train:
                grad = ["--tessel-train-step=" + self.o.train]
            r = run([self.tool("tessel-opt"), base + ".mlir"] + grad +
                    ["--tessel-propagate", "-o", base + ".prop.mlir"])
            if r.returncode:
                self.fail(label, r.stderr)
                continue
            if self.o.grad or self.o.train:
                # Gradients: each partial sum is added in a different order
                # on N ranks, and many entries are tiny.
                # Over several optimizer steps rounding differences compound.
                steps = self.o.train and self.o.train_steps > 1
                self.case(label, base + ".prop.mlir", 1,
                          rtol=self.o.rtol or ("1e-4" if steps else "1e-5"),
                          atol=self.o.atol or ("1e-6" if steps else "1e-7"))
                continue
            # The models' losses agree to rounding: a tight tolerance catches
            # small errors (a missing padding mask) a loose one would not.
            self.case(label, base + ".prop.mlir", 1, rtol="1e-6", atol="1e-7")

    def files(self, paths):
        for path in paths:
            label = os.path.basename(path)
            base = os.path.join(self.tmp, label)
            if self.o.as_is:
                shutil.copyfile(path, base + ".mlir")
                self.case(label, base + ".mlir", 7)
                continue
            r = run([self.tool("tessel-opt"), path, "--tessel-propagate", "-o",
                     base + ".prop.mlir"])
            if r.returncode:
                self.fail(label, r.stderr[-800:])
                continue
            self.case(label, base + ".prop.mlir", 7)

    def random(self, n, seed):
        rng = random.Random(seed)
        for i in range(n):
            g = check_propagation.Gen(rng)
            text = g.program()
            base = os.path.join(self.tmp, "random-%d-%d" % (seed, i))
            with open(base + ".mlir", "w") as f:
                f.write(text)
            plan = self.auto_shard_passes(rng) if self.o.auto_shard else []
            r = run([self.tool("tessel-opt"), base + ".mlir"] + plan +
                    ["--tessel-propagate", "-o", base + ".prop.mlir"])
            if plan and r.returncode == 1 and AUTO_SHARD_REFUSAL.search(
                    r.stderr):
                # A diagnostic of what auto-shard does not take (sub-axes,
                # calls, a limit nothing fits): refused, not wrong.
                self.refused += 1
                print("refused random %d/%d: %s" % (
                    seed, i, AUTO_SHARD_REFUSAL.search(r.stderr).group(0)))
                continue
            if r.returncode:
                self.fail("random %d/%d" % (seed, i), r.stderr[-800:])
                continue
            self.case("random %d/%d" % (seed, i), base + ".prop.mlir", i)

    def auto_shard_passes(self, rng):
        """--tessel-auto-shard on the program's mesh: half the time with
        its annotations as constraints, half with them stripped; a quarter
        of the time under a memory limit (1-64 KiB per device)."""
        opts = "func=f training=false"
        if rng.random() < 0.25:
            opts += " memory=%dKiB" % rng.choice([1, 2, 4, 16, 64])
        strip = ["--tessel-strip-shardings"] if rng.random() < 0.5 else []
        return strip + ["--tessel-auto-shard=" + opts]

    def reshards(self, n, seed):
        """N random reshards: an argument laid out one way returned laid out
        another (1-3 axes of sizes 1-4, shapes of 1-3 dimensions of 1-13)."""
        rng = random.Random(seed)
        for i in range(n):
            text = reshard_program(rng)
            base = os.path.join(self.tmp, "reshard-%d-%d" % (seed, i))
            with open(base + ".mlir", "w") as f:
                f.write(text)
            self.case("reshard %d/%d" % (seed, i), base + ".mlir", i)


def quoted(a):
    """An axis as a sharding writes it: "a", or a sub-axis "a":(k)m."""
    name, _, sub = a.partition(":")
    return '"%s"' % name + (":" + sub if sub else "")


def sub_axes(a, n, rng):
    """Axis `a` of size n whole, or (sometimes) cut into a major and a minor
    sub-axis."""
    cuts = [p for p in range(2, n) if n % p == 0]
    if not cuts or rng.random() < 0.6:
        return [a]
    p = rng.choice(cuts)
    return ["%s:(1)%d" % (a, p), "%s:(%d)%d" % (a, p, n // p)]


def canonical(dim, sizes):
    """Merges adjacent sub-axes that continue each other (the verifier
    wants them written as one)."""
    out = []
    for a in dim:
        if out and ":" in a and ":" in out[-1]:
            n0, s0 = out[-1].split(":")
            n1, s1 = a.split(":")
            k0, m0 = map(int, s0[1:].split(")"))
            k1, m1 = map(int, s1[1:].split(")"))
            if n0 == n1 and k0 * m0 == k1:
                out[-1] = (n0 if k0 == 1 and m0 * m1 == sizes[n0]
                           else "%s:(%d)%d" % (n0, k0, m0 * m1))
                continue
        out.append(a)
    return out


def reshard_program(rng):
    axes = ["a", "b", "c"][:rng.randint(1, 3)]
    sizes = [rng.choice([1, 2, 3, 4, 4, 6, 8]) if rng.random() < 0.4
             else rng.randint(1, 4) for _ in axes]
    while len(axes) > 1 and sizes[0] * sizes[1] > 24:
        sizes[1] = 2
    shape = [rng.randint(1, 13) for _ in range(rng.randint(1, 3))]

    def layout():
        dims = [[] for _ in shape]
        parts = [p for a, n in zip(axes, sizes) for p in sub_axes(a, n, rng)]
        for a in rng.sample(parts, len(parts)):
            if rng.random() < 0.7:
                dims[rng.randrange(len(shape))].append(a)
        dims = [canonical(d, dict(zip(axes, sizes))) for d in dims]
        return "[" + ", ".join(
            "{" + ", ".join(quoted(a) for a in d) + "}" for d in dims) + "]"
    t = "tensor<%sxf32>" % "x".join(map(str, shape))
    mesh = ", ".join('"%s"=%d' % (a, n) for a, n in zip(axes, sizes))
    return ("tessel.mesh @mesh [%s]\n"
            "func.func @f(%%x: %s {tessel.sharding = #tessel.sharding<@mesh, %s>})"
            " -> (%s {tessel.sharding = #tessel.sharding<@mesh, %s>}) {\n"
            "  return %%x : %s\n}\n" % (mesh, t, layout(), t, layout(), t))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="directory of the tools")
    p.add_argument("--models", action="store_true")
    p.add_argument("--moe", action="store_true",
                   help="like --models, for the experts model on the "
                        "expert-parallel meshes")
    p.add_argument("--random", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reshards", type=int, default=0,
                   help="check N random reshards (one value, two layouts)")
    p.add_argument("--files", nargs="*", default=[],
                   help="programs (a function @f) to check, e.g. regressions")
    p.add_argument("--as-is", action="store_true",
                   help="with --files: the files' shardings are final; "
                        "partition them without propagating")
    p.add_argument("--grad", action="store_true",
                   help="differentiate the models first (--tessel-grad) and "
                        "compare loss and every gradient")
    p.add_argument("--train", default="",
                   help="build a train step with these --tessel-train-step "
                        "options first and compare its every output")
    p.add_argument("--train-steps", type=int, default=0,
                   help="with --train: run that many steps, feeding "
                        "parameters and state back, and compare the last")
    p.add_argument("--only", default="",
                   help="with --models: comma-separated regular expressions "
                        "over MODEL:STRATEGY selecting the cases")
    p.add_argument("--rtol", default="", help="override the tolerance")
    p.add_argument("--atol", default="", help="override the tolerance")
    p.add_argument("--optimize", action="store_true",
                   help="also run --tessel-optimize-collectives")
    p.add_argument("--auto-shard", action="store_true",
                   help="with --random: choose the shardings by "
                        "--tessel-auto-shard first")
    o = p.parse_args()
    c = Checker(o)
    if o.models or o.moe:
        c.models()
    if o.files:
        c.files(o.files)
    if o.random:
        c.random(o.random, o.seed)
    if o.reshards:
        c.reshards(o.reshards, o.seed)
    refused = (", %d refused by auto-shard" % c.refused) if c.refused else ""
    print("%d passed, %d failed%s" % (c.passed, c.failed, refused))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
