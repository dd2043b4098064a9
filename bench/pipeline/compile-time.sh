#!/usr/bin/env bash
# Compile time and peak memory of tessel-compile for a pipelined GPT
# (4 layers, hidden 64, sequence 32, batch 16, pp=4, 1F1B) as the number of
# microbatches grows. Usage: bench/pipeline/compile-time.sh [build-dir] [m...]
set -euo pipefail
BUILD=${1:-build}
shift || true
MS=${*:-4 8 16 32 64}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BUILD/bin/tessel-models" gpt --layers 4 --hidden 64 --heads 4 --vocab 256 \
  --seq 32 --batch 16 --mesh pp=4 -o "$WORK/gpt.mlir"
echo "| m | compile time | max RSS |"
echo "|---|---|---|"
for m in $MS; do
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$BUILD/bin/tessel-compile" \
    "$WORK/gpt.mlir" --optimizer "sgd lr=0.01" \
    --pipeline "schedule=1f1b microbatches=$m" -o "$WORK/step" >/dev/null
  read -r secs kb < "$WORK/time"
  echo "| $m | $secs s | $((kb / 1024)) MB |"
done
