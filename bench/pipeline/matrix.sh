#!/usr/bin/env bash
# Pipelined == unpipelined over the whole matrix the pipeline issue names:
# every schedule (gpipe, 1f1b, interleaved v=2, zb-h1) on pp2, pp4, pp2 x dp2,
# pp2 x tp2 and pp2 x dp2 x tp2 (8 ranks), with microbatches 1, P, 2P and an
# odd count where the schedule allows it (interleaved needs a multiple of P),
# on GPT and Llama, 5 steps each, against the one-rank run with gradient
# accumulation over the same microbatches
# (test/pipeline/Inputs/pipeline_equal.py; the test suite runs a sample of
# this matrix). Usage: bench/pipeline/matrix.sh [BUILD_DIR] [--mpi]
set -euo pipefail
PYTHON=${PYTHON:-python3} # with numpy
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$(cd "${1:-build}" && pwd)/bin
MPI=()
[ "${2:-}" = --mpi ] && MPI=(--mpi "mpirun --allow-run-as-root --oversubscribe")
BASE=${TESSEL_BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/tessel-pipeline-matrix.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -c "import random, struct; random.seed(11); open('$WORK/tokens.bin', 'wb').write(b''.join(struct.pack('<H', random.randrange(32)) for _ in range(8000)))"
configs=()
for model in gpt llama; do
  for mesh in pp=2:none pp=4:none pp=2,dp=2:dp pp=2,tp=2:tp pp=2,dp=2,tp=2:dp-tp; do
    p=${mesh#pp=}; p=${p%%[,:]*}
    for schedule in gpipe 1f1b zb-h1 interleaved; do
      for m in 1 "$p" $((2 * p)) $((p + 1)); do
        if [ "$schedule" = interleaved ]; then
          [ $((m % p)) -eq 0 ] || continue
          configs+=("$model:${mesh%%:*}:${mesh#*:}:$schedule:$m:2:$((2 * p))")
        else
          configs+=("$model:${mesh%%:*}:${mesh#*:}:$schedule:$m:1:$((2 * p))")
        fi
      done
    done
  done
done
echo "${#configs[@]} configurations"
fails=0
for c in "${configs[@]}"; do
  line=$("$PYTHON" "$ROOT/test/pipeline/Inputs/pipeline_equal.py" --bin "$BIN" \
    --work "$WORK/run" --tokens "$WORK/tokens.bin" "${MPI[@]}" "$c" 2>&1) || true
  echo "$line"
  case "$line" in equal*) ;; *) fails=$((fails + 1)) ;; esac
  rm -rf "$WORK/run"
done
echo "$fails of ${#configs[@]} configurations differ or fail"
[ "$fails" -eq 0 ]
