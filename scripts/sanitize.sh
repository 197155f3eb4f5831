#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# overlap's own code instrumented (Debian's libMLIR is not), in a build
# directory of its own: the tools, the unit tests and the runtime's threads
# load the sanitizer runtime themselves, the Python test preloads it (CMake
# sets that test's environment). Any report fails its test.
# allow_user_poisoning=0: libMLIR's own poisoning annotations,
# compiled without the sanitizer, would otherwise raise false reports.
# Leak checking is off: MLIR's contexts keep their uniqued storage to exit.
# Usage: scripts/sanitize.sh [build-dir]   (default: build-sanitize)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-sanitize}
"$root/scripts/setup.sh" libclang-rt-22-dev
"$root/scripts/build.sh" "$build" -DOVERLAP_SANITIZE=address,undefined \
  -DOVERLAP_FUZZ=ON
echo "sanitize: [$((SECONDS / 60)) min $((SECONDS % 60)) s] built; the suite"
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build" && ctest --output-on-failure "${@:2}"
