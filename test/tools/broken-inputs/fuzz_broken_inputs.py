#!/usr/bin/env python3
"""Feeds tessel-opt broken inputs and fails on any crash, hang or unlocated error.

Two sources of broken input:
  * hand-written files (--hand-written DIR): each must be rejected with exit
    code 1 and a `FILE:LINE:COL: error:` diagnostic;
  * mutants of valid files (--seed-file F, repeatable): each seed is cut into
    small units (the top-level ops between `// -----` markers or function
    boundaries), and every mutant applies 1-3 random edits (delete a span,
    insert a token, change a number or a type, duplicate, drop or swap lines,
    truncate) drawn from a fixed RNG seed. A mutant may be valid; then
    tessel-opt must exit 0. Mutants rotate through four pipelines: parse
    only; --tessel-strip-shardings --canonicalize --cse (folders see odd
    IR); --tessel-propagate=explain=true; propagate, partition, optimize
    collectives and the comm report.

Any exit by signal, any exit code other than 0/1, any run over the time limit,
or an exit 1 whose errors lack a location fails the test; the offending input
is written next to --out so it can become a regression case.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys

TOKENS = ["{", "}", "[", "]", "(", ")", "<", ">", ",", ":", "=", "->", "?",
          "%0", "%arg0", "@mesh", "@nomesh", '"tp"', '"dp"', '""', "x", "-1",
          "0", "1", "99999999999999999999", "-9223372036854775808", "tensor<",
          "f32", "i1", "bf16", "#tessel.sharding<", "#tessel.dim<", "tessel.",
          "dense<", '"', "\n", "p0", "p-1", "{?}", "dims = []", "0x7FC00000",
          "tessel.mesh @mesh [\"dp\"=0]", "func.func", "return", "^bb0:",
          "tensor<0xf32>", "tensor<f32>", "loc(", "#loc", "// -----"]
NUMBERS = ["0", "-1", "1", "2", "3", "7", "2147483648", "-9223372036854775808",
           "9223372036854775807", "99999999999999999999", "1.0e+300", "nan"]
TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index",
         "complex<f32>", "none", "tensor<4xf32>", "vector<4xf32>"]
ERROR_LINE = re.compile(r"^(.*):(\d+):(\d+): error: ")


def units(text):
    """Splits a seed file into small self-contained units."""
    text = re.sub(r"^// (RUN|CHECK|expected-|NOMESH|STRIP).*$", "", text,
                  flags=re.M)
    chunks = [c for c in re.split(r"^// -----$", text, flags=re.M) if c.strip()]
    out = []
    for chunk in chunks:
        meshes = "\n".join(l for l in chunk.splitlines()
                           if l.startswith("tessel.mesh"))
        funcs = re.split(r"(?=^func\.func )", chunk, flags=re.M)
        bodies = [f for f in funcs if f.startswith("func.func")]
        if len(bodies) <= 1:
            out.append(chunk)
        else:
            out.extend(meshes + "\n" + f for f in bodies)
    return out


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(9)
        lines = text.split("\n")
        if not text:
            return rng.choice(TOKENS)
        if kind == 0:  # delete a span
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(1, 20):]
        elif kind == 1:  # insert a token
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif kind == 2:  # change a number
            spots = list(re.finditer(r"-?\d+(\.\d+)?(e[-+]?\d+)?", text))
            if spots:
                m = rng.choice(spots)
                text = text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
        elif kind == 3:  # change an element type
            spots = list(re.finditer(r"\b(f32|f16|bf16|f64|i1|i32|i64)\b", text))
            if spots:
                m = rng.choice(spots)
                text = text[:m.start()] + rng.choice(TYPES) + text[m.end():]
        elif kind == 4:  # duplicate a line
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == 5:  # drop a line
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == 6:  # swap two lines
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == 7:  # truncate
            text = text[:rng.randrange(len(text) + 1)]
        else:  # replace a word by another word of the text
            words = list(re.finditer(r"[A-Za-z_][\w.]*", text))
            if len(words) > 1:
                m, other = rng.choice(words), rng.choice(words)
                text = text[:m.start()] + other.group(0) + text[m.end():]
    return text


def run(tool, path, args, timeout, must_fail):
    try:
        p = subprocess.run([tool, path] + args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang (over %ss)" % timeout
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return "killed by signal %d\n%s" % (-p.returncode, err[-2000:])
    if p.returncode not in (0, 1):
        return "exit code %d\n%s" % (p.returncode, err[-2000:])
    if p.returncode == 0 and must_fail:
        return "accepted, but it is a broken input"
    if p.returncode == 1:
        errors = [l for l in err.splitlines() if " error: " in l or
                  l.startswith("error:")]
        if not errors:
            return "exit 1 without an error diagnostic\n" + err[-2000:]
        for line in errors:
            m = ERROR_LINE.match(line)
            if not m or os.path.basename(m.group(1)) != os.path.basename(path):
                return "error without FILE:LINE:COL: " + line
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--hand-written")
    parser.add_argument("--seed-file", action="append", default=[])
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--out", required=True, help="scratch directory")
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    pipelines = [[], ["--tessel-strip-shardings", "--canonicalize", "--cse"],
                 ["--tessel-propagate=explain=true"],
                 ["--tessel-propagate", "--tessel-partition",
                  "--tessel-optimize-collectives", "--tessel-comm-report"]]

    jobs = []  # (path, args, must_fail)
    if opts.hand_written:
        for name in sorted(os.listdir(opts.hand_written)):
            jobs.append((os.path.join(opts.hand_written, name), [], True))
    seeds = []
    for f in opts.seed_file:
        with open(f, encoding="utf-8") as fh:
            seeds.extend(units(fh.read()))
    rng = random.Random(opts.seed)
    for i in range(opts.mutants if seeds else 0):
        text = mutate(rng.choice(seeds), rng)
        path = os.path.join(opts.out, "mutant-%d-%05d.mlir" % (opts.seed, i))
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        jobs.append((path, pipelines[i % len(pipelines)], False))

    failures = 0
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        results = pool.map(
            lambda j: (j, run(opts.tool, j[0], j[1], opts.timeout, j[2])), jobs)
        for (path, args, must_fail), problem in results:
            if problem:
                failures += 1
                print("FAIL %s %s: %s" % (path, " ".join(args), problem))
            elif not must_fail:
                os.remove(path)
    print("%d inputs (%d hand-written, %d mutants of %d seed units), "
          "%d failures" % (len(jobs), len(jobs) - opts.mutants * bool(seeds),
                           opts.mutants * bool(seeds), len(seeds), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
