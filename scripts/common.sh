# Shared by scripts/main.sh and scripts/test.sh: install what a fresh Debian 12
# or Ubuntu machine lacks, then configure and build incrementally in build/.
# Sourced, not run.

TESSEL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${TESSEL_BUILD_DIR:-$TESSEL_ROOT/build}
JOBS=${TESSEL_JOBS:-$(nproc 2>/dev/null || echo 2)}

# System packages the build and the tests need.
TESSEL_PACKAGES=(cmake ninja-build g++ python3 git
                 libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
                 libgtest-dev python3-numpy libopenblas-dev
                 libopenmpi-dev openmpi-bin coinor-libcbc-dev pkg-config
                 binutils util-linux)  # strings, flock: used by tests

tessel_missing_packages() {
  local pkg missing=()
  for pkg in "${TESSEL_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  echo "${missing[@]}"
}

tessel_install_packages() {
  local missing
  missing=$(tessel_missing_packages)
  [ -z "$missing" ] && return 0
  if ! command -v apt-get >/dev/null; then
    echo "tessel: missing packages: $missing (and no apt-get to install them)" >&2
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "tessel: missing system packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y $missing" >&2
    echo "(LLVM/MLIR 22 come from Debian 12's security/backports archive or apt.llvm.org.)" >&2
    exit 1
  fi
  echo "tessel: installing $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
}

tessel_build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S "$TESSEL_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build "$BUILD_DIR" -j "$JOBS"
}
