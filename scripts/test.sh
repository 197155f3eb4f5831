#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds, and runs every test
# (the lit suite, the unit tests and the generated-docs check) through ctest.
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$build"
cd "$build" && ctest --output-on-failure
