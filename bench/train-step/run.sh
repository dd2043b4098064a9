#!/usr/bin/env bash
# Compile time and communication of a whole training step: a 96-layer GPT
# (hidden 1024, 16 heads, vocabulary 50257, sequence 1024, batch 8) on
# dp=2 x tp=4 with the dp-tp rules, AdamW with clipping. Times each stage
# (train-step builder, propagation, partition + collective optimization)
# and prints the comm report totals of @train_step. Usage:
#   bench/train-step/run.sh [BUILD_DIR]
set -euo pipefail
BIN=${1:-build}/bin
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-train-step.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK"
"$BIN/tessel-models" gpt --layers 96 --hidden 1024 --heads 16 --vocab 50257 \
  --seq 1024 --batch 8 --mesh dp=2,tp=4 --strategy dp-tp -o "$WORK/gpt.mlir"
echo "forward: $(wc -l < "$WORK/gpt.mlir") lines"
/usr/bin/time -f "train-step builder: %e s, %M KB max RSS" "$BIN/tessel-opt" "$WORK/gpt.mlir" \
  --tessel-train-step="optimizer=adamw clip-norm=1.0" -o "$WORK/step.mlir"
echo "train step: $(wc -l < "$WORK/step.mlir") lines"
/usr/bin/time -f "propagation: %e s, %M KB max RSS" "$BIN/tessel-opt" "$WORK/step.mlir" \
  --tessel-propagate -o "$WORK/step.prop.mlir"
/usr/bin/time -f "partition + optimize-collectives: %e s, %M KB max RSS" "$BIN/tessel-opt" \
  "$WORK/step.prop.mlir" --tessel-partition --tessel-optimize-collectives \
  --tessel-comm-report -o /dev/null > "$WORK/report.txt" 2>&1 || { tail "$WORK/report.txt"; exit 1; }
grep "partition + optimize" "$WORK/report.txt"
echo "communication of @train_step per device per step:"
awk '/Communication of @train_step/ {on = 1} on && /^total/' "$WORK/report.txt"

# Memory per device by liveness (--tessel-memory-report) under each
# recomputation policy, and with bf16 compute; communication of each.
for variant in "recompute=none" "recompute=tagged" "recompute=layers" \
               "recompute=none compute-type=bf16" \
               "recompute=none compute-type=bf16 save-f32-activations=true" \
               "recompute=layers compute-type=bf16"; do
  "$BIN/tessel-opt" "$WORK/gpt.mlir" \
    --tessel-train-step="optimizer=adamw clip-norm=1.0 $variant" \
    --tessel-propagate --tessel-partition --tessel-optimize-collectives \
    --tessel-memory-report=func=train_step --tessel-comm-report \
    -o /dev/null > "$WORK/mem.txt" 2>&1 || { tail "$WORK/mem.txt"; exit 1; }
  echo "== $variant"
  grep -E "arguments|peak of computed|kept for backward" "$WORK/mem.txt"
  awk '/Communication of @train_step/ {on = 1} on && /^total:/' "$WORK/mem.txt"
done
