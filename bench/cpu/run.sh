#!/usr/bin/env bash
# CPU backend throughput: a GPT training step (AdamW) compiled by
# tessel-compile and run on 1 rank, for hidden sizes 256..1024, against the
# OpenBLAS sgemm rate measured in the same run. Prints a markdown table.
#   bench/cpu/run.sh [BUILD_DIR] [STEPS]
# CPUS="x86-64-v3 native" (the default) lists the tessel-compile --cpu
# values to compare; HIDDEN="256 512 768 1024" the model sizes.
# What is measured (see bench/cpu/README.md): compile time of each
# configuration (tessel-compile wall time), ms per step after the first,
# achieved GFLOP/s = matmul FLOPs per step (counted by the runtime) / step
# time, and that as a fraction of sgemm GFLOP/s (n = 1024, all cores).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
STEPS=${2:-8}
BIN=$BUILD/bin
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-bench-cpu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK"
CBLAS_INC=$(dirname "$(find /usr/include -name cblas.h -path '*openblas*' | head -n 1)")
cc -O2 -I"$CBLAS_INC" "$ROOT/bench/cpu/sgemm.c" -o "$WORK/sgemm" -lopenblas
SGEMM=$("$WORK/sgemm" 1024 | awk '{print $3}')
echo "OpenBLAS sgemm 1024^3: $SGEMM GFLOP/s ($(nproc) cores)"
echo
echo "| --cpu | hidden | layers | heads | seq x batch | params | compile s | ms/step | GFLOP/step | GFLOP/s | % of sgemm | in matmuls |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for CPU in ${CPUS:-x86-64-v3 native}; do
for H in ${HIDDEN:-256 512 768 1024}; do
  L=4; HEADS=$((H / 64)); S=128; B=8; V=8192
  "$BIN/tessel-models" gpt --layers $L --hidden $H --heads $HEADS --vocab $V \
    --seq $S --batch $B -o "$WORK/gpt$H.mlir"
  start=$(date +%s.%N)
  "$BIN/tessel-compile" "$WORK/gpt$H.mlir" --optimizer "adamw lr=1e-3" -O2 \
    --cpu "$CPU" -o "$WORK/gpt$H"
  compile=$(echo "$(date +%s.%N) - $start" | bc)
  out=$("$WORK/gpt$H" --steps "$STEPS" --print-every 1000)
  summary=$(echo "$out" | grep '^summary:')
  ms=$(echo "$summary" | sed -E 's/summary: ([0-9.]+) ms.*/\1/')
  gflop=$(echo "$summary" | sed -E 's/.*matmuls ([0-9.]+) GFLOP\/step.*/\1/')
  rate=$(echo "$summary" | sed -E 's/.*, ([0-9.]+) GFLOP\/s per rank.*/\1/')
  inmm=$(echo "$summary" | sed -E 's/.*time in matmuls ([0-9]+)%.*/\1/')
  params=$(( (12 * H * H * L + V * H + S * H) / 1000000 ))
  pct=$(echo "scale=0; 100 * $rate / $SGEMM" | bc)
  printf "| %s | %d | %d | %d | %dx%d | %dM | %.1f | %.0f | %.2f | %.1f | %d%% | %d%% |\n" \
    "$CPU" $H $L $HEADS $S $B $params "$compile" "$ms" "$gflop" "$rate" "$pct" "$inmm"
done
done
