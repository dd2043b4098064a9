#!/usr/bin/env python3
"""Runs the GPU checks of bench/gpu/check.sh and writes one JSON report.

Needs only Python and PyTorch on the GPU machine (no LLVM, MLIR or Tessel
build): the executables and expected results come from prepare.sh.
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import threading
import time

DTYPES = {"F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4), "I64": ("q", 8),
          "BF16": ("bf16", 2), "F16": ("e", 2), "U8": ("B", 1),
          "BOOL": ("B", 1), "I8": ("b", 1), "I16": ("h", 2)}


def read_safetensors(path):
    """name -> list of floats (bf16 widened), from a safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        fmt, size = DTYPES[info["dtype"]]
        raw = data[begin:end]
        count = len(raw) // size
        if fmt == "bf16":
            halves = struct.unpack("<%dH" % count, raw)
            vals = [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                    for h in halves]
        else:
            vals = list(struct.unpack("<%d%s" % (count, fmt), raw))
        out[name] = (info["dtype"], vals)
    return out


def compare(expected, actual, rtol, atol):
    """Per tensor: max abs error and whether every element is close."""
    report, ok = {}, True
    for name, (dtype, want) in expected.items():
        if name not in actual:
            report[name] = "missing"
            ok = False
            continue
        got = actual[name][1]
        tol_r = 1e-2 if dtype in ("BF16", "F16") else rtol
        worst, good = 0.0, len(got) == len(want)
        for w, g in zip(want, got):
            if math.isnan(w) or math.isnan(g):
                good &= math.isnan(w) and math.isnan(g)
                continue
            if math.isinf(w) or math.isinf(g):
                good &= w == g
                continue
            err = abs(w - g)
            worst = max(worst, err)
            good &= err <= atol + tol_r * abs(w)
        report[name] = {"max_abs_err": worst, "ok": bool(good)}
        ok &= good
    return ok, report


def run(cmd, timeout, env=None):
    """(return code, stdout+stderr, seconds); 124 and the output so far on a
    timeout."""
    import tempfile
    start = time.time()
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                             env=env)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = 124
        log.seek(0)
        out = log.read().decode(errors="replace")
    return rc, out, time.time() - start


def losses(text):
    return [float(m.group(1)) for m in
            re.finditer(r"^step \d+: loss ([-0-9.e+naninf]+)", text, re.M)]


class PeakMemory:
    """Polls nvidia-smi for the GPU's used memory while a run lasts."""

    def __init__(self):
        self.peak, self.stop = 0, False
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def poll(self):
        while not self.stop:
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used",
                     "--format=csv,noheader,nounits", "-i", "0"],
                    capture_output=True, text=True, timeout=5).stdout
                self.peak = max(self.peak, int(out.split()[0]))
            except Exception:  # noqa: BLE001 - best effort
                pass
            time.sleep(0.2)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def op_zoo(p):
    cases = {}
    # Sums of 10^4-10^5 terms in another order: looser absolute tolerance.
    atol = {"long-reductions": 1e-3}
    for name in ["op-zoo", "softmax-nan", "dropout", "top-k", "cumsum",
                 "float-conversions", "long-reductions"]:
        exe = os.path.join(p, name)
        out_st = os.path.join(p, name + ".gpu.st")
        rc, text, secs = run([exe, "--steps", "1", "--save", out_st], 120)
        case = {"rc": rc, "seconds": round(secs, 2)}
        if rc == 0:
            ok, detail = compare(
                read_safetensors(os.path.join(p, name + ".expected.st")),
                read_safetensors(out_st), 1e-4, atol.get(name, 1e-5))
            case.update(ok=ok, tensors=detail)
        else:
            case.update(ok=False, output=text[-2000:])
        cases[name] = case
    return cases


def gpt_steps(p):
    cases = {}
    for name, tol in [("gpt-f32", 1e-3), ("gpt-bf16", 3e-2)]:
        with open(os.path.join(p, name + ".cpu.txt")) as f:
            want = losses(f.read())
        rc, text, secs = run([os.path.join(p, name), "--steps", "5"], 300)
        got = losses(text)
        ok = rc == 0 and len(got) == len(want) and all(
            abs(a - b) <= tol * abs(b) for a, b in zip(got, want))
        cases[name] = {"ok": ok, "rc": rc, "gpu_losses": got,
                       "cpu_losses": want, "rel_tol": tol,
                       "output": text[-1500:]}
    return cases


def custom_call(p):
    """The example's GELU custom call, its GPU entry (FusedGelu.cu, loaded
    from custom.kernels/ beside the executable), 3 SGD steps on one GPU
    against the interpreter running its CPU entry."""
    out_st = os.path.join(p, "custom.gpu.st")
    rc, text, secs = run([os.path.join(p, "custom"), "--steps", "3",
                          "--save", out_st], 120)
    case = {"rc": rc, "seconds": round(secs, 2), "output": text[-1500:]}
    if rc == 0:
        ok, detail = compare(
            read_safetensors(os.path.join(p, "custom.expected.st")),
            read_safetensors(out_st), 1e-4, 1e-3)
        case.update(ok=ok, tensors=detail)
    else:
        case["ok"] = False
    return case


def nccl_library():
    """libnccl.so.2 of the installed nvidia-nccl Python package (PyTorch's
    dependency), or None to let the executable search."""
    try:
        import nvidia.nccl  # noqa: F401
        for base in list(getattr(nvidia.nccl, "__path__", [])):
            lib = os.path.join(base, "lib", "libnccl.so.2")
            if os.path.exists(lib):
                return lib
    except ImportError:
        pass
    return None


def gpu_trace(path):
    """What --trace wrote for a GPU run: spans per row and category; ok
    when the GPU compute row has kernels and matmuls timed by CUDA events
    (positive durations, within the host's steps)."""
    if not os.path.exists(path):
        return {"ok": False, "why": "no trace file " + path}
    events = json.load(open(path))["traceEvents"]
    rows = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    spans = [e for e in events if e["ph"] == "X"]
    count = {}
    for e in spans:
        key = "%s / %s" % (rows.get(e["tid"], e["tid"]), e["cat"])
        count[key] = count.get(key, 0) + 1
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["cat"] == "step"]
    gpu = [e for e in spans if rows.get(e["tid"], "").endswith("GPU compute")]
    lo = min(a for a, _ in steps) if steps else 0
    hi = max(b for _, b in steps) if steps else 0
    inside = all(e["dur"] >= 0 and lo - 1e3 <= e["ts"] <= hi + 1e3
                 for e in gpu)
    cats = {e["cat"] for e in gpu}
    return {"ok": bool(gpu) and inside and {"kernel", "compute"} <= cats,
            "spans": count, "gpu_spans_within_steps": inside}


def nccl(p):
    """The f32 GPT as one process launched torchrun-style (RANK,
    WORLD_SIZE, MASTER_ADDR/PORT): NCCL loaded at run time, the TCP
    rendezvous, ncclCommInitRank; a one-GPU machine runs one rank (NCCL
    refuses two ranks on one GPU), whose losses must be the CPU's. Traced:
    the GPU rows' CUDA-event spans are checked too."""
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
               LOCAL_WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT="29531")
    lib = nccl_library()
    if lib:
        env["TESSEL_NCCL_LIBRARY"] = lib
    with open(os.path.join(p, "gpt-f32.cpu.txt")) as f:
        want = losses(f.read())
    trace = os.path.join(p, "nccl-trace.json")
    rc, text, secs = run([os.path.join(p, "gpt-f32"), "--steps", "5",
                          "--trace", trace], 300, env=env)
    got = losses(text)
    ok = (rc == 0 and "(nccl)" in text and len(got) == len(want) and
          all(abs(a - b) <= 1e-3 * abs(b) for a, b in zip(got, want)))
    # One process per GPU writes NAME.rankN.json.
    spans = gpu_trace(trace.replace(".json", ".rank0.json"))
    return {"ok": ok and spans["ok"], "rc": rc, "nccl_library": lib,
            "gpu_losses": got, "cpu_losses": want, "trace": spans,
            "seconds": round(secs, 2), "output": text[-1500:]}


def gemm(p):
    res = {}
    rc, text, _ = run([os.path.join(p, "gemm"), "--steps", "30"], 300)
    m = re.search(r"summary: ([0-9.]+) ms/step.*?([0-9.]+) GFLOP/s per rank",
                  text)
    res["tessel"] = {"rc": rc, "output": text[-800:]}
    if m:
        ms = float(m.group(1))
        res["tessel"].update(ms_per_step=ms,
                             tflops=round(2 * 8192 ** 3 / (ms / 1e3) / 1e12, 1),
                             runtime_tflops=round(float(m.group(2)) / 1e3, 1))
    try:
        import torch
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        for _ in range(5):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        start, n = time.time(), 30
        for _ in range(n):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        secs = (time.time() - start) / n
        res["torch"] = {"version": torch.__version__,
                        "ms": round(secs * 1e3, 3),
                        "tflops": round(2 * 8192 ** 3 / secs / 1e12, 1)}
        del a, b
        torch.cuda.empty_cache()
    except Exception as e:  # noqa: BLE001
        res["torch"] = {"error": repr(e)}
    if "tflops" in res["tessel"] and "tflops" in res.get("torch", {}):
        res["ratio"] = round(res["tessel"]["tflops"] / res["torch"]["tflops"], 3)
    return res


def gpt350m(p):
    with open(os.path.join(p, "gpt350m.args")) as f:
        args = f.read().split()
    dims = {args[i][2:]: int(args[i + 1]) for i in range(1, len(args), 2)}
    L, H, V, S, B = (dims["layers"], dims["hidden"], dims["vocab"],
                     dims["seq"], dims["batch"])
    params = L * 12 * H * H + V * H + S * H  # weights; biases and norms small
    with PeakMemory() as mem:
        rc, text, secs = run([os.path.join(p, "gpt350m"), "--steps", "3"],
                             int(os.environ.get("TESSEL_GPU_BIG_TIMEOUT", "420")))
    res = {"rc": rc, "seconds": round(secs, 1), "params_approx": params,
           "peak_gpu_mib": mem.peak, "losses": losses(text),
           "output": text[-1500:]}
    m = re.search(r"summary: ([0-9.]+) ms/step", text)
    if m:
        ms = float(m.group(1))
        tokens = B * S / (ms / 1e3)
        flops = (6 * params + 12 * L * H * S) * tokens
        res.update(ms_per_step=ms, tokens_per_s=round(tokens),
                   mfu_vs_989_tflops=round(flops / 989e12, 4))
    # The executable's own MFU (its model FLOPs over the GPU's dense peak
    # from Tessel's table, docs/running.md), beside the estimate above.
    m = re.search(r"model FLOPs utilization ([0-9.]+)% of ([0-9.]+) TFLOP/s",
                  text)
    if m:
        res.update(mfu_reported=float(m.group(1)) / 100,
                   peak_tflops_reported=float(m.group(2)))
    return res


def profile(p):
    """Where a 2-layer GPT step of the 350M widths spends its time: the
    kernels (by name) and matmuls of its second step, from --trace."""
    trace = os.path.join(p, "..", "gptprof.trace.json")
    rc, text, secs = run([os.path.join(p, "gptprof"), "--steps",
                          os.environ.get("TESSEL_GPU_PROFILE_STEPS", "2"),
                          "--trace", trace],
                         int(os.environ.get("TESSEL_GPU_BIG_TIMEOUT", "420")))
    res = {"rc": rc, "seconds": round(secs, 1), "output": text[-1200:]}
    if rc != 0:
        return res
    with open(trace) as f:
        events = json.load(f)
    events = events.get("traceEvents", events)
    steps = sorted((e for e in events if e.get("cat") == "step"),
                   key=lambda e: e["ts"])
    if steps:
        last = steps[-1]
        lo, hi = last["ts"], last["ts"] + last["dur"]
        events = [e for e in events if lo <= e.get("ts", -1) <= hi]
        res["step_ms"] = round(last["dur"] / 1e3, 1)
    totals = {}
    for e in events:
        if e.get("cat") in ("kernel", "compute", "communication"):
            key = (e["cat"], e["name"])
            n, t = totals.get(key, (0, 0.0))
            totals[key] = (n + 1, t + e["dur"])
    res["by_category_ms"] = {}
    for (cat, _), (_, t) in totals.items():
        res["by_category_ms"][cat] = round(
            res["by_category_ms"].get(cat, 0) + t / 1e3, 1)
    top = sorted(totals.items(), key=lambda kv: -kv[1][1])[:25]
    res["top"] = [{"cat": c, "name": n, "count": k, "ms": round(t / 1e3, 2)}
                  for (c, n), (k, t) in top]
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--payload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="zoo,gpt,nccl,custom,gemm,gpt350m")
    a = ap.parse_args()
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S")}
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
               "--format=csv,noheader"], 20)[1].strip()
    report["gpu"] = smi
    steps = {"zoo": op_zoo, "gpt": gpt_steps, "nccl": nccl,
             "custom": custom_call,
             "gemm": gemm,
             "gpt350m": gpt350m, "profile": profile}
    for key in a.only.split(","):
        start = time.time()
        try:
            report[key] = steps[key](a.payload)
        except Exception as e:  # noqa: BLE001
            report[key] = {"error": repr(e)}
        report[key + "_seconds"] = round(time.time() - start, 1)
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
