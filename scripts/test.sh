#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds, and runs every test
# (the lit suite, the unit tests, the generated-docs and format checks)
# through ctest; then the same suite again under ASan and UBSan, with a
# fuzz smoke run (scripts/sanitize.sh, its own build directory beside the
# first); then the runtime's unit tests under TSan (scripts/tsan.sh).
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$build"
(cd "$build" && ctest --output-on-failure)
echo "test: the suite again under AddressSanitizer and UBSan (scripts/sanitize.sh)"
"$root/scripts/sanitize.sh" "$build-sanitize"
echo "test: the runtime's unit tests under ThreadSanitizer (scripts/tsan.sh)"
"$root/scripts/tsan.sh" "$build-tsan"
