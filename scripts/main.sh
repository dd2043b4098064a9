#!/usr/bin/env bash
# The main job: install what is missing, build, then parse, verify and print
# the annotated example model (examples/mlp.mlir) and its single-device form.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tessel_install_packages
tessel_build

MODEL=${1:-$TESSEL_ROOT/examples/mlp.mlir}
OPT=$BUILD_DIR/bin/tessel-opt
echo "== $MODEL, verified and printed by tessel-opt"
"$OPT" "$MODEL"
echo
echo "== the same model with its shardings stripped (the single-device program)"
"$OPT" --tessel-strip-shardings "$MODEL"
