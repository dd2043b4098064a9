#!/usr/bin/env bash
# Long run of the broken-input fuzzer (the test suite runs 600 mutants of
# seed 1). Usage: bench/fuzz/run-broken-inputs.sh [MUTANTS_PER_SEED] [SEEDS...]
# Failing inputs stay in $OUT (default $TESSEL_BENCH_DIR/tessel-fuzz) for triage; turn each
# into a file under test/tools/broken-inputs/Inputs/broken.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MUTANTS=${1:-5000}
shift || true
SEEDS=("$@")
[ ${#SEEDS[@]} -eq 0 ] && SEEDS=(2 3 4 5)
# Temporary files go to a folder made under TESSEL_BENCH_DIR (default: $TMPDIR
# or /tmp) and removed on exit; nothing else is written.
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-fuzz-broken.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export TMPDIR="$WORK"
OUT=${OUT:-$BASE/tessel-fuzz}
status=0
for seed in "${SEEDS[@]}"; do
  python3 "$ROOT/test/tools/broken-inputs/fuzz_broken_inputs.py" \
    --tool "$ROOT/build/bin/tessel-opt" \
    --seed-file "$ROOT/test/dialects/tessel/ops.mlir" \
    --seed-file "$ROOT/test/dialects/tessel/invalid.mlir" \
    --seed-file "$ROOT/test/passes/tessel-strip-shardings.mlir" \
    --seed-file "$ROOT/examples/mlp.mlir" \
    --seed-file "$ROOT/test/passes/tessel-propagate.mlir" \
    --mutants "$MUTANTS" --seed "$seed" --out "$OUT/seed-$seed" || status=1
done
exit $status
