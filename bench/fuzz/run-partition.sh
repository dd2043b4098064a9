#!/usr/bin/env bash
# Differential fuzzing of --tessel-partition (and --tessel-optimize-
# collectives) over many random programs, then N random reshards (one
# value moved between two random layouts), then N random programs laid out
# by --tessel-auto-shard; the suite runs 2 x 40, 150 and 40.
# Usage: bench/fuzz/run-partition.sh [N] [SEEDS...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-500}
shift || true
SEEDS=("$@")
[ ${#SEEDS[@]} -eq 0 ] && SEEDS=(3 4 5 6)
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-fuzz-partition.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK"
status=0
for seed in "${SEEDS[@]}"; do
  python3 "$ROOT/test/partition/check_partition.py" --bin "$ROOT/build/bin" \
    --random "$N" --seed "$seed" | tail -1 || status=1
  python3 "$ROOT/test/partition/check_partition.py" --bin "$ROOT/build/bin" \
    --random "$N" --seed "$seed" --optimize | tail -1 || status=1
  python3 "$ROOT/test/partition/check_partition.py" --bin "$ROOT/build/bin" \
    --reshards "$N" --seed "$seed" | tail -1 || status=1
  python3 "$ROOT/test/partition/check_partition.py" --bin "$ROOT/build/bin" \
    --random "$N" --seed "$seed" --auto-shard | tail -1 || status=1
done
exit $status
