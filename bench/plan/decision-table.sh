#!/usr/bin/env bash
# The decision table of docs/planning.md: tessel-plan on each row's model
# and cluster (H100s, 8 per node, global batch 1024 sequences), with the
# table's degrees compared (--compare), for mixed-precision AdamW with f32
# weights (--optimizer "adamw compute-type=bf16", what test/plan/table-*.test
# pin) and with bf16 weights (tessel-models --dtype bf16: 2+2+8 bytes per
# parameter). Writes OUT (default bench/plan/decision-table.txt).
#
#   bench/plan/decision-table.sh [BUILD] [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$ROOT/build}/bin
OUT=${2:-$ROOT/bench/plan/decision-table.txt}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows=(
  "7B 8 dp=8 llama --layers 32 --hidden 4096 --heads 32 --ffn 11008 --vocab 32000 --seq 4096"
  "13B 16 dp=8,tp=2 llama --layers 40 --hidden 5120 --heads 40 --ffn 13824 --vocab 32000 --seq 4096"
  "70B 64 dp=4,tp=8,pp=2 llama --layers 80 --hidden 8192 --heads 64 --kv-heads 8 --ffn 28672 --vocab 32000 --seq 4096"
  "175B 512 dp=8,tp=8,pp=8 gpt --layers 96 --hidden 12288 --heads 96 --vocab 50304 --seq 2048"
  "1T 2048 dp=16,tp=8,pp=16 gpt --layers 128 --hidden 25600 --heads 160 --vocab 51200 --seq 2048"
)
{
  echo "# tessel-plan, $(date -u +%Y-%m-%d), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  for variant in "f32-weights:f32:adamw compute-type=bf16" "bf16-weights:bf16:adamw"; do
    IFS=: read -r name dtype opt <<< "$variant"
    for row in "${rows[@]}"; do
      read -r size devices table model <<< "$row"
      "$BIN/tessel-models" $model --batch 1 --dtype "$dtype" -o "$TMP/model.mlir"
      echo
      echo "## $size on $devices, $name (--optimizer \"$opt\"), table: $table"
      start=$(date +%s%N)
      "$BIN/tessel-plan" "$TMP/model.mlir" --devices "$devices" --gpu h100 \
        --global-batch 1024 --optimizer "$opt" --top 3 --compare "$table" 2>&1 \
        | grep -v '^$'
      echo "($(( ($(date +%s%N) - start) / 1000000 )) ms)"
    done
  done
} > "$OUT"
echo "wrote $OUT"
