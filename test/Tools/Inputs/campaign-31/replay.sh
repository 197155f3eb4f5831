#!/bin/sh
# replay.sh STATUSES COMMAND...: runs COMMAND as the reliability campaign
# ran its reproducers (address space limited to 8,000,000 KiB, at most
# 30 s) and fails unless it ends with one of STATUSES ("1 2") and, when
# that is not 0, says why (on stderr, or on stdout as overlap-run's
# comparisons do). Prints "ok: COMMAND".
allowed=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
(ulimit -v 8000000 && exec timeout 30 "$@") >"$err" 2>&1
status=$?
case " $allowed " in
  *" $status "*) ;;
  *) echo "replay: exit status $status, not one of $allowed: $*" >&2
     head -c 2000 "$err" >&2
     exit 1 ;;
esac
if [ "$status" != 0 ] && [ ! -s "$err" ]; then
  echo "replay: exit status $status without a message: $*" >&2
  exit 1
fi
echo "ok: $*"
