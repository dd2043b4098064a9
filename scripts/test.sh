#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test
# (lit + FileCheck, GoogleTest, the broken-input fuzz corpus) through ctest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tessel_install_packages
tessel_build
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" "$@"
