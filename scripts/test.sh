#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds, and runs every test
# (the lit suite, the unit tests, the generated-docs and format checks)
# through ctest; then the same suite again under ASan and UBSan
# (scripts/sanitize.sh, its own build directory beside the first).
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$build"
(cd "$build" && ctest --output-on-failure)
echo "test: the suite again under AddressSanitizer and UBSan (scripts/sanitize.sh)"
"$root/scripts/sanitize.sh" "$build-sanitize"
