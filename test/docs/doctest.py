#!/usr/bin/env python3
"""Runs the shell blocks of a Markdown file and checks the output it shows.

Markers are HTML comments (invisible in rendered Markdown) on the line just
before a fenced block; docs/doctests.md describes them:

  <!-- doctest: run [sub="OLD=>NEW"]... -->     ```sh block: run each command;
                                                 every one must exit 0
  <!-- doctest: console [numbers=any] [sub=..] -->  ```console block: run each
                                                 `$ ` command, check the lines
                                                 after it
  <!-- doctest: output [numbers=any] -->         block: the output of the last
                                                 run block
  <!-- doctest: file NAME -->                    block: written to NAME first
  <!-- doctest: skip REASON -->                  block: not run, for REASON

Every ```sh, ```bash and ```console block must carry a marker. The whole file
runs as one bash session in a fresh scratch directory whose entries link to
the repository's (data/, examples/, test/, ...) and whose build/ is the build
directory; build/bin is on PATH, and python3 is this script's interpreter.

Usage: doctest.py DOC.md --root SRC --build BUILD --scratch DIR [--timeout S]
       doctest.py DOC.md --list     (print the blocks and their markers)
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

SHELL_LANGS = {"sh", "bash", "console", "shell"}
KINDS = {"run", "console", "output", "file", "skip"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$")
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class DocError(Exception):
    pass


class Block:
    def __init__(self, line, lang, text, marker, marker_line):
        self.line = line  # 1-based line of the opening fence
        self.lang = lang
        self.text = text  # content, common indentation removed
        self.kind = None
        self.options = {}
        self.subs = []
        self.reason = ""
        self.name = ""
        if marker is not None:
            self.parse_marker(marker, marker_line)

    def parse_marker(self, marker, marker_line):
        where = f"line {marker_line}"
        kind, _, rest = marker.partition(" ")
        if kind not in KINDS:
            raise DocError(f"{where}: unknown doctest marker '{kind}' "
                           f"(expected one of {', '.join(sorted(KINDS))})")
        self.kind = kind
        if kind == "skip":
            self.reason = rest.strip()
            if not self.reason:
                raise DocError(f"{where}: 'doctest: skip' needs a reason")
            return
        words = shlex.split(rest)
        if kind == "file":
            if len(words) != 1:
                raise DocError(f"{where}: 'doctest: file' takes one file name")
            self.name = words[0]
            return
        for w in words:
            key, eq, value = w.partition("=")
            if not eq:
                raise DocError(f"{where}: option '{w}' is not KEY=VALUE")
            if key == "sub":
                old, arrow, new = value.partition("=>")
                if not arrow or not old:
                    raise DocError(f"{where}: sub needs \"OLD=>NEW\", got '{value}'")
                self.subs.append((old, new))
            elif key == "numbers" and value == "any":
                self.options[key] = value
            else:
                raise DocError(f"{where}: unknown option '{w}'")
        if self.subs and kind not in ("run", "console"):
            raise DocError(f"{where}: sub applies to run and console blocks only")

    def substituted(self, text):
        for old, new in self.subs:
            if old not in text:
                raise DocError(f"line {self.line}: substitution '{old}' matches "
                               "nothing in the block")
            text = text.replace(old, new)
        return text


def parse(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if MARKER.match(lines[i]) and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
                raise DocError(f"line {i + 1}: a doctest marker must be on the "
                               "line just before a fenced block")
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = lines[i]
            if c.strip().startswith(fence) and c.strip().strip(fence[0]) == "":
                break
            body.append(c[len(indent):] if c.startswith(indent) else c.lstrip())
            i += 1
        else:
            raise DocError(f"line {start + 1}: fenced block is not closed")
        i += 1
        marker = marker_line = None
        if start > 0:
            mm = MARKER.match(lines[start - 1])
            if mm:
                marker, marker_line = mm.group(1), start
        b = Block(start + 1, lang, "\n".join(body) + "\n", marker, marker_line)
        if b.kind is None and lang in SHELL_LANGS:
            raise DocError(f"line {start + 1}: ```{lang} block has no doctest marker "
                           "(run, console, output, file or skip REASON; see docs/doctests.md)")
        if b.kind == "run" and lang not in SHELL_LANGS - {"console"}:
            raise DocError(f"line {start + 1}: 'doctest: run' needs a ```sh or ```bash block")
        if b.kind == "console" and lang != "console":
            raise DocError(f"line {start + 1}: 'doctest: console' needs a ```console block")
        blocks.append(b)
    return blocks


def complete(cmd):
    """Whether cmd is a whole shell command (no open quote, heredoc, loop)."""
    if cmd.rstrip().endswith("\\"):
        return False
    r = subprocess.run(["bash", "-n"], input=cmd + "\n", capture_output=True, text=True)
    return r.returncode == 0 or not ("unexpected end of file" in r.stderr
                                     or "unexpected EOF" in r.stderr)


def split_commands(text, line, console):
    """[(line, command, shown output lines)] of a sh or console block."""
    out = []
    lines = text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if console:
            if not ln.startswith("$ "):
                if out:
                    out[-1][2].append(ln)
                    i += 1
                    continue
                raise DocError(f"line {line + 1 + i}: a console block starts with '$ '")
            cmd = ln[2:]
        else:
            if not ln.strip() or ln.lstrip().startswith("#"):
                i += 1
                continue
            cmd = ln
        first = i
        while not complete(cmd):
            i += 1
            if i == len(lines):
                raise DocError(f"line {line + 1 + first}: command is not complete "
                               "at the end of the block")
            cmd += "\n" + lines[i]
        out.append((line + 1 + first, cmd, []))
        i += 1
    return out


def normalize(s, numbers):
    s = " ".join(s.split())
    return NUMBER.sub("#", s) if numbers else s


def check_output(shown, actual, numbers):
    """FileCheck-style: each shown line, in order, is a substring of an actual
    line (whitespace collapsed). A line '...' matches anything; inside a line
    '...' stands for any text. Returns None or a message."""
    act = [normalize(a, numbers) for a in actual]
    pos = 0
    for want in shown:
        w = normalize(want, numbers)
        if not w or w == "...":
            continue
        pieces = [p.strip() for p in w.split("...")]
        found = None
        for k in range(pos, len(act)):
            if w in act[k] or (len(pieces) > 1 and contains_in_order(act[k], pieces)):
                found = k
                break
        if found is None:
            return f"shown line not found in the output (in order): {want.strip()}"
        pos = found + 1
    return None


def contains_in_order(s, pieces):
    at = 0
    for p in pieces:
        k = s.find(p, at)
        if k < 0:
            return False
        at = k + len(p)
    return True


def setup_scratch(root, build, scratch, shim):
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    for e in sorted(os.listdir(root)):
        if e.startswith(".") or e.startswith("build"):
            continue
        os.symlink(os.path.join(root, e), os.path.join(scratch, e))
    os.symlink(os.path.abspath(build), os.path.join(scratch, "build"))
    os.makedirs(shim, exist_ok=True)
    py = os.path.join(shim, "python3")
    if os.path.lexists(py):
        os.remove(py)
    os.symlink(sys.executable, py)


def run_doc(args, blocks):
    scratch = os.path.abspath(args.scratch)
    args.root = os.path.abspath(args.root)
    shim = scratch + ".bin"
    setup_scratch(args.root, args.build, scratch, shim)

    # Units: ("file", block) | ("cmd", block, line, command, shown)
    script = ["exec 2>&1", "set -o pipefail", "__dt_st=0"]
    units = []
    stats = {"run": 0, "checked": 0, "skip": 0, "file": 0}
    last_run = None
    outputs = []  # (output block, run unit ids)
    for b in blocks:
        if b.kind == "skip":
            stats["skip"] += 1
        elif b.kind == "file":
            path = os.path.join(scratch, b.name)
            with open(path, "w") as f:
                f.write(b.text)
            stats["file"] += 1
        elif b.kind in ("run", "console"):
            stats["run"] += 1
            ids = []
            for line, cmd, shown in split_commands(b.substituted(b.text), b.line,
                                                   b.kind == "console"):
                k = len(units)
                units.append((b, line, cmd, shown))
                ids.append(k)
                if shown and any(s.strip() for s in shown):
                    stats["checked"] += 1
                script += [f"printf '\\n\\001DT {k} BEGIN\\n'", "(exit $__dt_st)", cmd,
                           "__dt_st=$?", f"printf '\\n\\001DT {k} END %d\\n' $__dt_st"]
            last_run = (b, ids)
        elif b.kind == "output":
            if last_run is None:
                raise DocError(f"line {b.line}: 'doctest: output' with no run block before it")
            outputs.append((b, last_run[1]))
            stats["checked"] += 1
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.join(scratch, "build", "bin"), shim,
                                   env.get("PATH", "")])
    env["LC_ALL"] = "C.UTF-8"
    # A page's `mpirun` behaves for root (CI, containers) as for a user.
    env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    for v in ("FILECHECK_OPTS",):
        env.pop(v, None)
    script_path = scratch + ".sh"
    with open(script_path, "w") as f:
        f.write("\n".join(script) + "\n")
    timed_out = False
    with subprocess.Popen(["bash", "--noprofile", "--norc", script_path], cwd=scratch,
                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          start_new_session=True) as p:
        try:
            raw, _ = p.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, 9)
            raw, _ = p.communicate()
    text = raw.decode(errors="replace")

    results = {}  # k -> (status or None, lines)
    cur, buf = None, []
    for ln in text.split("\n"):
        if ln.startswith("\x01DT "):
            _, k, what, *st = ln.split(" ")
            if what == "BEGIN":
                cur, buf = int(k), []
            else:
                while buf and not buf[-1].strip():
                    buf.pop()
                results[int(k)] = (int(st[0]), buf)
                cur = None
        elif cur is not None:
            buf.append(ln)
    if cur is not None:
        results[cur] = (None, buf)

    failures = []
    for k, (b, line, cmd, shown) in enumerate(units):
        if k not in results:
            continue
        status, lines = results[k]
        where = f"{args.doc}:{line}"
        if status is None:
            failures.append((where, cmd, "did not finish" + (" (timeout)" if timed_out else ""), lines))
            continue
        has_shown = any(s.strip() for s in shown)
        if status != 0 and not has_shown:
            failures.append((where, cmd, f"exited with status {status}", lines))
            continue
        if has_shown:
            msg = check_output(shown, lines, b.options.get("numbers") == "any")
            if msg:
                failures.append((where, cmd, msg, lines))
    for ob, ids in outputs:
        if not all(k in results for k in ids):
            continue
        lines = [l for k in ids for l in results[k][1]]
        msg = check_output(ob.text.rstrip("\n").split("\n"), lines,
                           ob.options.get("numbers") == "any")
        if msg:
            failures.append((f"{args.doc}:{ob.line}", "(output block)", msg, lines))
    return stats, failures, len(results), len(units)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("doc")
    ap.add_argument("--root", help="repository root")
    ap.add_argument("--build", help="build directory")
    ap.add_argument("--scratch", help="scratch directory (recreated)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    try:
        blocks = parse(args.doc)
        if args.list:
            for b in blocks:
                if b.kind:
                    print(f"{b.line}: {b.lang or '-'} {b.kind} {b.name or b.reason}")
            return 0
        stats, failures, ran, total = run_doc(args, blocks)
    except DocError as e:
        print(f"{args.doc}:{e}", file=sys.stderr)
        return 1
    name = os.path.basename(args.doc)
    print(f"{name}: {stats['run']} blocks run ({total} commands, {ran} started), "
          f"{stats['checked']} outputs checked, {stats['file']} files, "
          f"{stats['skip']} skipped")
    for where, cmd, msg, lines in failures:
        print(f"\n{where}: error: {msg}\n  command: {cmd}\n  output:")
        for l in lines[-40:]:
            print("    " + l)
    if failures:
        print(f"\n{len(failures)} doc test failure(s) in {args.doc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
