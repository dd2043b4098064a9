#!/usr/bin/env bash
# Compile time of a long element-wise chain (bench/compile-time/gen_chain.py)
# with many arguments, compiled as an entry point (no training step) to an
# executable. Prints wall time and peak RSS per length. Usage:
#   bench/compile-time/chain.sh [BUILD_DIR] [ARGS] [OPS...]
#   (default: build 2000 2500 5000 10000)
set -euo pipefail
BIN=${1:-build}/bin
ARGS=${2:-2000}
shift 2 || true
OPS=("$@")
[ ${#OPS[@]} -eq 0 ] && OPS=(2500 5000 10000)
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-chain.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for N in "${OPS[@]}"; do
  python3 "$HERE/gen_chain.py" "$N" "$ARGS" > "$WORK/chain$N.mlir"
  /usr/bin/time -f "chain of $N ops, $ARGS arguments: %e s, %M KB max RSS" \
    "$BIN/tessel-compile" "$WORK/chain$N.mlir" --entry chain \
    -o "$WORK/chain$N" 2>&1 | tail -1
done
