#!/usr/bin/env bash
# The tests whose verdict a loaded machine could change, run again and
# again beside two CPU-bound processes of their own, as on a busy CI
# machine (lit runs two workers on two cores): every lit test that starts
# MPI jobs or waits with a timeout or emulates links (found by what its
# lines use: %mpirun, %two-hosts, timeout, --lost-after, --link-bandwidth,
# --link-latency), the pytest files that do the same, and the runtime's
# unit tests (the threads transport's timeouts and link emulation). Prints
# each round's results and time, then "N passed, M failed" over all rounds
# (test runs); exits 1 if any failed, keeping the failing rounds' logs.
# Usage: scripts/stress-tests.sh [--rounds N] [--build DIR]
#        (defaults: 10 rounds, the build directory build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=10
build=$root/build
usage() {
  echo "usage: scripts/stress-tests.sh [--rounds N] [--build DIR]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    *) echo "stress-tests: unknown argument '$1'" >&2; usage ;;
  esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "stress-tests: --rounds must be a positive integer, not '$rounds'" >&2
  exit 2
fi
if ! absolute=$(cd "$build" 2>/dev/null && pwd); then
  echo "stress-tests: no build directory $build (scripts/build.sh makes it)" >&2
  exit 2
fi
build=$absolute
cache=$build/CMakeCache.txt
if [ ! -f "$cache" ] || [ ! -f "$build/test/lit.site.cfg.py" ]; then
  echo "stress-tests: $build is not a configured build directory" >&2
  exit 2
fi
lit=$(sed -n 's/^LLVM_EXTERNAL_LIT:[A-Z]*=//p' "$cache")
python=$(sed -n 's/^OVERLAP_PYTHON_TEST_INTERPRETER:[A-Z]*=//p' "$cache")
python=${python:-/usr/bin/python3}
runtime_tests=$build/runtime/OvlRuntimeTests

markers='%mpirun|%two-hosts|timeout|--lost-after|--link-(bandwidth|latency)'
lit_tests=()
while IFS= read -r test; do
  lit_tests+=("$build/$test")
done < <(cd "$root" && grep -rlE -e "$markers" test \
           --include='*.mlir' --include='*.test' | sort)
py_markers='timeout|lost_after|link_bandwidth|link_latency|transport="mpi"'
py_tests=()
while IFS= read -r test; do
  py_tests+=("$test")
done < <(cd "$root" && grep -lE -e "$py_markers" python/tests/test_*.py | sort)

# lit's line for a test that did not pass: "FAIL: OVERLAP :: name (3 of 16)".
failed_result='^\(FAIL\|XPASS\|UNRESOLVED\|TIMEOUT\): OVERLAP :: \(.*\) ([0-9]* of [0-9]*)$'
logs=$(mktemp -d "${TMPDIR:-/tmp}/stress-tests.XXXXXX")
burners=()
cleanup() {
  for pid in "${burners[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in 1 2; do
  (while :; do :; done) &
  burners+=("$!")
done

echo "stress-tests: $rounds round(s) beside ${#burners[@]} CPU burners on" \
  "$(nproc) core(s): ${#lit_tests[@]} lit test(s), ${#py_tests[@]} pytest" \
  "file(s), the runtime's unit tests; logs in $logs"
passed=0 failed=0 kept=0
for round in $(seq "$rounds"); do
  started=$SECONDS
  log=$logs/round$round.log
  failures=()
  : > "$log"
  if [ "${#lit_tests[@]}" -gt 0 ]; then
    (cd "$root" && "$lit" -v --time-tests -j2 "${lit_tests[@]}") > "$log" 2>&1 ||
      true
  fi
  round_passed=$(grep -c '^PASS: ' "$log" || true)
  unsupported=$(grep -c '^UNSUPPORTED: ' "$log" || true)
  while IFS= read -r name; do
    failures+=("$name")
  done < <(sed -n "s/$failed_result/\\2/p" "$log")
  # lit itself failing (or a test it did not report) is a failure too.
  missing=$((${#lit_tests[@]} - round_passed - unsupported - ${#failures[@]}))
  if [ "$missing" -gt 0 ]; then
    failures+=("$missing lit test(s) without a result (see the log)")
  fi
  if [ "${#py_tests[@]}" -gt 0 ]; then
    if (cd "$root" &&
        OVERLAP_CAPI_LIB=$build/lib/libOverlapCAPI.so OVERLAP_BIN=$build/bin \
        PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
        "$python" -m pytest -q -p no:cacheprovider "${py_tests[@]}") \
        >> "$log" 2>&1; then
      round_passed=$((round_passed + 1))
    else
      failures+=("pytest ${py_tests[*]}")
    fi
  fi
  if "$runtime_tests" >> "$log" 2>&1; then
    round_passed=$((round_passed + 1))
  else
    failures+=("OvlRuntimeTests")
  fi
  passed=$((passed + round_passed))
  failed=$((failed + ${#failures[@]}))
  slowest=$(sed -n 's/^\([0-9.]*s\): OVERLAP :: \(.*\)/\2 \1/p' "$log" | head -1)
  echo "round $round/$rounds: $round_passed passed, ${#failures[@]} failed," \
    "$unsupported unsupported ($((SECONDS - started)) s; slowest: $slowest)"
  if [ "${#failures[@]}" -gt 0 ]; then
    printf '  failed: %s\n' "${failures[@]}"
    kept=$((kept + 1))
  else
    rm -f "$log"
  fi
done
echo "$passed passed, $failed failed"
if [ "$kept" -eq 0 ]; then
  rm -rf "$logs"
else
  echo "stress-tests: the logs of the failing rounds are in $logs"
fi
[ "$failed" -eq 0 ]
