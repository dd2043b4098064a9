#!/usr/bin/env bash
# Random-program properties of --tessel-propagate over many seeds (the suite
# runs 2 x 200 programs). Usage: bench/fuzz/run-propagation.sh [N] [SEEDS...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-1000}
shift || true
SEEDS=("$@")
[ ${#SEEDS[@]} -eq 0 ] && SEEDS=(3 4 5 6)
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-fuzz-propagation.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK"
status=0
for seed in "${SEEDS[@]}"; do
  python3 "$ROOT/test/passes/check_propagation.py" \
    --tool "$ROOT/build/bin/tessel-opt" --random "$N" --seed "$seed" | tail -1 || status=1
done
exit $status
