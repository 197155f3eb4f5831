#!/usr/bin/env bash
# Fuzzes overlap for a set time, two ways at once, under ASan and UBSan:
# - in process (tools/overlap-fuzz, libFuzzer): parse, verify, the
#   decomposition, ovl-overlap-pipeline, ovl-lower-to-ici, ovl-to-llvm to
#   LLVM IR, the simulator, on mutated programs;
# - on the command line (cmdline.py): overlap-opt, overlap-sim and
#   overlap-run run as users run them, with mutated flags and values.
# Then it replays every finding and prints one line per distinct stack
# signature (triage.py), saying whose code it is. Exit status 1 when there
# is a finding that is not a documented upstream crash.
#
# Usage: bench/fuzz/run.sh [--minutes N | --seconds N] [--jobs N] [--smoke]
#                          [build-dir]
#   --minutes N  how long to fuzz (default 60); --seconds N likewise
#   --jobs N     in-process fuzzing processes (default 1), in libFuzzer's
#                -fork mode, which goes on after a finding; the command-line
#                fuzzer runs beside them
#   --smoke      seed 1, the in-process fuzzer stops at its first finding,
#                then 20 command lines: the fuzz-smoke test of the suite
#   build-dir    default build-sanitize (configured with OVERLAP_FUZZ=ON)
# The corpus grows in <build-dir>/fuzz/corpus from run to run; findings go
# to <build-dir>/fuzz/findings (cmdline-*.sh: the command lines'); the logs
# to <build-dir>/fuzz/log and cmdline.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=3600 jobs=1 smoke=0 build=$root/build-sanitize
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --minutes) case $2 in *[!0-9]*|'') seconds=x ;; *) seconds=$(( $2 * 60 )) ;; esac; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
case $seconds$jobs in *[!0-9]*) echo "run.sh: --minutes, --seconds and --jobs take positive integers" >&2; exit 2 ;; esac

fuzzer=$build/bin/overlap-fuzz
if [ "$smoke" = 0 ]; then
  "$root/scripts/setup.sh" libclang-rt-22-dev
  "$root/scripts/build.sh" "$build" -DOVERLAP_SANITIZE=address,undefined \
    -DOVERLAP_FUZZ=ON
fi
[ -x "$fuzzer" ] || { echo "run.sh: no $fuzzer (configure with -DOVERLAP_FUZZ=ON)" >&2; exit 2; }

work=$build/fuzz
mkdir -p "$work/seeds" "$work/corpus" "$work/findings"
/usr/bin/python3 "$root/bench/fuzz/seed-corpus.py" "$work/seeds" "$root" >/dev/null
# Unlike overlap's other executables, the fuzzer does not load the ASan
# runtime first by itself (libFuzzer is linked in ahead of it).
LD_PRELOAD=$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)
export LD_PRELOAD
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -timeout: no input may take 30 s (a hang); -rss_limit_mb: nor 4 GiB.
flags=(-dict="$root/bench/fuzz/ovl.dict" -max_len=16384 -timeout=30
       -rss_limit_mb=4096 -max_total_time="$seconds"
       -artifact_prefix="$work/findings/" -print_final_stats=1)

cmdline=("$root/bench/fuzz/cmdline.py" --bin "$build/bin" --seeds "$work/seeds"
         --findings "$work/findings")
if [ "$smoke" = 1 ]; then
  # A copy of the seeds: the smoke run leaves the corpus as it was.
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$fuzzer" "${flags[@]}" -seed=1 "$scratch" "$work/seeds"
  /usr/bin/python3 "${cmdline[@]}" --runs 20 --seed 1
  exit
fi

log=$work/log
echo "fuzz: $seconds s, $jobs job(s), corpus $work/corpus, log $log"
before=$(ls "$work/findings" | wc -l)
/usr/bin/python3 "${cmdline[@]}" --seconds "$seconds" --seed "$RANDOM" \
  >"$work/cmdline.log" 2>&1 &
cmdline_pid=$!
# -fork: jobs in child processes, the run goes on after a finding.
"$fuzzer" "${flags[@]}" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 \
  -ignore_ooms=1 "$work/corpus" "$work/seeds" >"$log" 2>&1 || true
wait "$cmdline_pid" || true
tail -n +1 "$work/cmdline.log" | grep -v ' runs, .* distinct' | tail -20

# Executions: the last status line of the run (-fork: the sum of the jobs').
{ grep -E '^#[0-9]+' "$log" || true; } | tail -1 | sed 's/^/fuzz: last status: /'
# Every finding so far, replayed on this build: one that no longer fails
# was fixed since; the others are grouped by stack signature.
replays=$work/replays
rm -rf "$replays" && mkdir -p "$replays"
fixed=0
for finding in "$work"/findings/*; do
  [ -f "$finding" ] || continue
  name=$(basename "$finding")
  case $name in
    *.log) continue ;;
    cmdline-*.sh)
      # As long as cmdline.py gives a run (--timeout).
      replay=$(timeout 300 sh "$finding" 2>&1 >/dev/null) && rc=0 || rc=$?
      if [[ " 0 1 2 70 " == *" $rc "* ]] && ! grep -q 'Sanitizer\|runtime error:' <<<"$replay"; then
        fixed=$((fixed + 1)); continue
      fi ;;
    *)
      if replay=$("$fuzzer" -timeout=30 "$finding" 2>&1); then
        fixed=$((fixed + 1)); continue
      fi ;;
  esac
  printf '%s\n' "$replay" >"$replays/$name.log"
done
echo "fuzz: $fixed finding(s) of earlier runs replay clean (fixed since)"
status=0
if compgen -G "$replays/*.log" >/dev/null; then
  /usr/bin/python3 "$root/bench/fuzz/triage.py" "$root" "$replays"/*.log || status=1
fi
echo "fuzz: $(( $(ls "$work/findings" | wc -l) - before )) new finding file(s), $(ls "$work/corpus" | wc -l) corpus inputs"
exit $status
