#!/usr/bin/env python3
"""Compares each tool's --help with the options the docs mention.

For every tool, each option its --help lists must be mentioned (as `--name`,
or `name=` for a pass option) in the part of the docs that documents the
tool, and each option a command line in the docs passes to the tool must be
one --help lists. tessel-opt is checked for the tessel passes and their
options; a compiled program (--program) for the runtime's flags.

Usage: options.py --root SRC --bin BUILD/bin --program EXE
"""

import argparse
import glob
import os
import re
import subprocess
import sys

# Where each tool is documented: (file, heading substring or None = whole file).
HOMES = {
    "tessel-compile": [("docs/running.md", "`tessel-compile`"),
                       ("docs/running.md", "The target CPU"),
                       ("docs/extending.md", None), ("docs/planning.md", None)],
    "tessel-interp": [("docs/interpreter.md", None), ("docs/autodiff.md", None)],
    "tessel-models": [("docs/models.md", None)],
    "tessel-run": [("docs/running.md", "Ranks: threads or MPI")],
    "tessel-tokenize": [("docs/running.md", "Data: `tessel-tokenize`")],
    "tessel-generate": [("docs/running.md", "Sampling: `tessel-generate`")],
    "tessel-export": [("docs/running.md", "Exporting: `tessel-export`")],
    "tessel-plan": [("docs/planning.md", None)],
    "program": [("docs/running.md", "The compiled program"),
                ("docs/running.md", "Checkpoints"), ("docs/running.md", "Traces")],
}
GENERIC = {"--help", "--help-list", "--version", "--help-hidden", "--help-list-hidden"}
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def help_text(exe):
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    return r.stdout + r.stderr


def tool_options(text, section_suffix=" options:"):
    """Options of the tool's own category in llvm::cl --help output."""
    opts, inside = set(), False
    for ln in text.split("\n"):
        if ln.endswith(section_suffix) and not ln.startswith(" "):
            inside = not ln.startswith("Generic")
            continue
        m = re.match(r"^  (--?[A-Za-z][\w-]*)", ln)
        if inside and m:
            opts.add(m.group(1))
    return opts - GENERIC


def opt_passes(text):
    """{--tessel-pass: {option names}} and every option of tessel-opt."""
    passes, cur, every = {}, None, set()
    for ln in text.split("\n"):
        m = re.match(r"^( +)(--[\w-]+)", ln)
        if not m:
            continue
        every.add(m.group(2))
        depth = len(m.group(1))
        if m.group(2).startswith("--tessel-") and depth == 6:
            cur = m.group(2)
            passes[cur] = set()
        elif depth == 8 and cur:
            passes[cur].add(m.group(2)[2:])
        elif depth <= 6:
            cur = None
    return passes, every


def docs(root):
    files = ["README.md", "bench/README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return {f: open(os.path.join(root, f), encoding="utf-8").read() for f in files}


def sections(text, heading):
    """Text of the sections whose heading contains `heading` (with subsections)."""
    if heading is None:
        return text
    out, keep, level = [], False, 0
    for ln in text.split("\n"):
        m = re.match(r"^(#+) ", ln)
        if m:
            if heading in ln:
                keep, level = True, len(m.group(1))
            elif keep and len(m.group(1)) <= level:
                keep = False
        if keep:
            out.append(ln)
    return "\n".join(out)


def mentioned(text):
    return set(OPTION.findall(text))


def command_lines(text):
    """Command lines in the docs: fenced code lines (continuations joined) and
    inline code spans, as (line, text)."""
    out, lines, fence = [], text.split("\n"), False
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("```"):
            fence = not fence
            continue
        if fence:
            if out and out[-1][2]:
                out[-1] = (out[-1][0], out[-1][1] + " " + s, s.endswith("\\"))
            else:
                out.append((i + 1, s.lstrip("$ "), s.endswith("\\")))
        else:
            for span in re.findall(r"`([^`]+)`", ln):
                out.append((i + 1, span, False))
    return [(n, t) for n, t, _ in out]


TOOLS = ["tessel-compile", "tessel-interp", "tessel-models", "tessel-run",
         "tessel-tokenize", "tessel-opt", "tessel-plan"]
INVOKE = re.compile(r"(?:^|[\s(|;&])(?:build/bin/)?(tessel-[a-z]+|\./gpt)(?=\s|$)")


def invocations(cmd):
    """[(tool, argument text)] of a command line, split at spaced pipes."""
    out = []
    for part in re.split(r"\s\|\s|&&|;", cmd):
        m = INVOKE.search(part)
        if not m:
            continue
        tool = "program" if m.group(1) == "./gpt" else m.group(1)
        if tool not in TOOLS + ["program"]:
            continue
        args = part[m.end():]
        if tool == "tessel-run":
            # Options before the program are tessel-run's, after it the program's.
            mm = re.search(r"(?:^|\s)(\./[\w.-]+)", args)
            if mm:
                out.append(("program", args[mm.end():]))
                args = args[:mm.start()]
        out.append((tool, args))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--program", required=True)
    a = ap.parse_args()
    texts = docs(a.root)
    errors = []

    listed = {t: tool_options(help_text(os.path.join(a.bin, t)))
              for t in HOMES if t != "program"}
    listed["program"] = tool_options(help_text(a.program), " options:")
    passes, every_opt = opt_passes(help_text(os.path.join(a.bin, "tessel-opt")))

    # 1. Every listed option is documented where the tool is.
    for tool, homes in HOMES.items():
        home = "\n".join(sections(texts[f], h) for f, h in homes)
        doc = mentioned(home)
        for opt in sorted(listed[tool]):
            if opt not in doc:
                where = ", ".join(f"{f}" + (f" ({h})" if h else "") for f, h in homes)
                errors.append(f"{tool} {opt}: listed by --help but not documented in {where}")
    alltext = "\n".join(texts.values())
    # A pass option counts where a section (heading to heading) names the pass.
    paragraphs = re.split(r"\n(?=#+ )", alltext)
    for p, opts in sorted(passes.items()):
        if p not in mentioned(alltext):
            errors.append(f"tessel-opt {p}: listed by --help but no doc mentions it")
        for o in sorted(opts):
            if not any(p in par and re.search(rf"(?<![\w-])(--)?{re.escape(o)}(=|\b)", par)
                       for par in paragraphs):
                errors.append(f"tessel-opt {p} option {o}: listed by --help but no doc "
                              f"section mentions it with {p}")

    # 2. Every option a documented command passes exists.
    for f, text in texts.items():
        for line, cmd in command_lines(text):
            for tool, args in invocations(cmd):
                if tool == "tessel-opt":
                    for m in re.finditer(r"(?<![\w-])(--[\w-]+)(?:=(\"[^\"]*\"|'[^']*'|\S+))?", args):
                        opt, val = m.group(1), m.group(2)
                        if opt not in every_opt:
                            errors.append(f"{f}:{line}: tessel-opt has no option {opt}")
                        elif opt in passes and val:
                            for key in re.findall(r"(?:^|[\s\"'])([\w-]+)=", val):
                                if key not in passes[opt]:
                                    errors.append(f"{f}:{line}: {opt} has no option {key}")
                    continue
                for opt in OPTION.findall(args):
                    base = opt.split("=")[0]
                    if re.match(r"^-O\d?$", base):
                        base = "-O"
                    if base not in listed[tool] | GENERIC:
                        errors.append(f"{f}:{line}: {tool} has no option {base} "
                                      f"(in `{cmd.strip()[:100]}`)")
    for e in errors:
        print("error: " + e)
    n = sum(len(v) for v in listed.values()) + sum(1 + len(v) for v in passes.values())
    print(f"{n} options of {len(listed) + 1} tools checked, {len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
