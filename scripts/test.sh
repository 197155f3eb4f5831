#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds, and runs every test
# (the lit suite, the unit tests, the generated-docs and format checks)
# through ctest; then the same suite again under ASan and UBSan, with a
# fuzz smoke run (scripts/sanitize.sh, its own build directory beside the
# first); then the runtime's unit tests under TSan (scripts/tsan.sh).
# Each stage is announced with the minutes spent so far (the CI budget is
# 30 minutes on 2 cores).
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
stage() { echo "test: [$((SECONDS / 60)) min $((SECONDS % 60)) s] $1"; }
stage "installing what is missing (scripts/setup.sh)"
"$root/scripts/setup.sh"
stage "building (scripts/build.sh)"
"$root/scripts/build.sh" "$build"
stage "the suite (ctest)"
(cd "$build" && ctest --output-on-failure)
stage "the suite again under AddressSanitizer and UBSan (scripts/sanitize.sh)"
"$root/scripts/sanitize.sh" "$build-sanitize"
stage "the runtime's unit tests under ThreadSanitizer (scripts/tsan.sh)"
"$root/scripts/tsan.sh" "$build-tsan"
stage "done"
