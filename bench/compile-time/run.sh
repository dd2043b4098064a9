#!/usr/bin/env bash
# Compile time of a whole training step against the number of layers: a GPT
# (hidden 256, 8 heads, vocabulary 1024, sequence 64, batch 2) on
# dp=2 x tp=2 with the dp-tp rules and AdamW, compiled by tessel-compile to
# an executable. Prints wall time, peak RSS and the largest stages of
# --timing for each layer count. Usage:
#   bench/compile-time/run.sh [BUILD_DIR] [LAYERS...]   (default: 24 48 96)
set -euo pipefail
BIN=${1:-build}/bin
shift || true
LAYERS=("$@")
[ ${#LAYERS[@]} -eq 0 ] && LAYERS=(24 48 96)
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-compile-time.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for L in "${LAYERS[@]}"; do
  "$BIN/tessel-models" gpt --layers "$L" --hidden 256 --heads 8 --vocab 1024 \
    --seq 64 --batch 2 -o "$WORK/gpt$L.mlir"
  /usr/bin/time -f "layers $L: %e s, %M KB max RSS" "$BIN/tessel-compile" \
    "$WORK/gpt$L.mlir" --mesh dp=2,tp=2 --strategy dp-tp \
    --optimizer "adamw clip-norm=1.0" --timing -o "$WORK/gpt$L" \
    > "$WORK/timing$L.txt" 2>&1 || { tail "$WORK/timing$L.txt"; exit 1; }
  tail -1 "$WORK/timing$L.txt"
  grep -E "OneShotBufferizePass|BufferDeallocationSimplificationPass|optimize LLVM IR|emit object code" \
    "$WORK/timing$L.txt" | awk '{printf "  %-40s %8.2f s\n", $NF == "IR" ? "optimize LLVM IR" : ($NF == "code" ? "emit object code" : $NF), $1}'
done
