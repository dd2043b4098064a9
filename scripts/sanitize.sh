#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer and UndefinedBehaviorSanitizer
# (TESSEL_SANITIZE=ON) in build-asan/ (TESSEL_ASAN_BUILD_DIR): the tools,
# libtessel_rt and every executable the tests compile. Slower than
# scripts/test.sh (about 3x); run it before landing changes to lib/ or
# runtime/. Leak checking is off: MLIR's registries live until exit. User
# poisoning is off: LLVM's headers poison allocator slabs in our
# (instrumented) code that the uninstrumented libMLIR then uses without
# unpoisoning, which ASan would report as use-after-poison.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tessel_install_packages
ASAN_DIR=${TESSEL_ASAN_BUILD_DIR:-$TESSEL_ROOT/build-asan}
if [ ! -f "$ASAN_DIR/build.ninja" ]; then
  cmake -S "$TESSEL_ROOT" -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSEL_SANITIZE=ON
fi
cmake --build "$ASAN_DIR" -j "$JOBS"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$ASAN_DIR" --output-on-failure -j "$JOBS" "$@"
