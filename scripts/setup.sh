#!/usr/bin/env bash
# Installs the Debian packages overlap needs, if any is missing. Idempotent and
# silent when everything is present. Extra packages (what one script alone
# needs, such as the sanitizer runtime) may be named on the command line.
# Usage: scripts/setup.sh [package...]
set -euo pipefail

packages=(
  # LLVM/MLIR 22 headers, CMake config, tools (mlir-tblgen, lit, FileCheck).
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # The compiler, linker and build system overlap is built with.
  clang-22 lld-22 cmake ninja-build
  # Lint: scripts/check-format.sh, a ctest test.
  clang-format-22
  # Unit tests.
  libgtest-dev
  # The MPI transport of overlap-run (optional: built when MPI is found).
  libopenmpi-dev openmpi-bin
  # The Python package's tests and the benchmarks' plots (Debian's python3).
  python3-numpy python3-matplotlib python3-pytest
  # Other x86-64 hosts (AVX2 only, no AVX) for Runtime/emulated-hosts.test.
  qemu-user
  # A rank stopped inside an MPI call for Runtime/mpi/lost-in-creation.mlir.
  gdb
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "setup: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
else
  SUDO=
fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
