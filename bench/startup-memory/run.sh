#!/usr/bin/env bash
# Start-up memory of a compiled program: peak RSS per process of a GPT
# (4 layers, hidden 512, vocabulary 8192; 21 M parameters, with AdamW's two
# moments 0.26 GB of f32 state) trained with FSDP over dp=4, which shards
# every parameter and its optimizer state four ways. `--steps 0` stops
# after start-up (initialization of every rank's blocks), so the peak is
# what start-up needs. Runs 4 MPI processes (one rank each) and, where
# mpirun is missing, 4 ranks as threads of one process. Usage:
#   bench/startup-memory/run.sh [BUILD_DIR]
# (BUILD_DIR/bin holds the tools; for tools of another build copied
# elsewhere, TESSEL_CXX can point at a wrapper that links their runtime.)
set -euo pipefail
BIN=${1:-build}/bin
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-startup-memory.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$BIN/tessel-models" gpt --layers 4 --hidden 512 --heads 8 --vocab 8192 \
  --seq 64 --batch 8 -o "$WORK/gpt.mlir"
"$BIN/tessel-compile" "$WORK/gpt.mlir" --mesh dp=4 --strategy fsdp -o "$WORK/gpt"
"$BIN/tessel-compile" "$WORK/gpt.mlir" -o "$WORK/gpt1"
echo "state (parameters + AdamW moments, f32, global):"
"$BIN/tessel-compile" "$WORK/gpt.mlir" --mesh dp=4 --strategy fsdp --emit llvm \
  --print-program -o /dev/null | python3 -c '
import json, sys
p = json.loads(sys.stdin.readline())
args = p["entries"][0]["arguments"]
def mib(shapes):
    n = 0
    for s in shapes:
        k = 4
        for d in s: k *= d
        n += k
    return n / 2**20
carried = [a for a in args if a["role"] in ("parameter", "optimizer_state")]
print("  %.1f MiB global, %.1f MiB per rank on dp=4" % (
    mib(a["global_shape"] for a in carried), mib(a["shape"] for a in carried)))' \
  || echo "  (a description before version 2: tools older than 18dbbeb)"
echo "one device, one process:"
/usr/bin/time -f "  peak RSS %M KiB" "$WORK/gpt1" --steps 0 > /dev/null
if command -v mpirun > /dev/null; then
  echo "dp=4 as 4 MPI processes (one line per process):"
  mpirun --oversubscribe --allow-run-as-root -np 4 \
    /usr/bin/time -f "  peak RSS %M KiB" "$WORK/gpt" --steps 0 > /dev/null
fi
echo "dp=4 as 4 threads of one process:"
/usr/bin/time -f "  peak RSS %M KiB" "$WORK/gpt" --steps 0 > /dev/null
