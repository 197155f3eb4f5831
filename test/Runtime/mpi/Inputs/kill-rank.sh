#!/bin/sh
# kill-rank.sh RANK READY COMMAND...: runs COMMAND as this MPI rank; on rank
# RANK, kills it with SIGKILL, as a crash would, once the file READY exists
# (overlap-run --ready-file: every rank is about to run its steps and hears
# every other's heartbeat), and then stays until the job's abort (or the
# launcher's timeout) ends it, so that the launcher does not see the rank
# end and leaves the other ranks to find the loss themselves. A COMMAND that
# ends before READY appears passes its exit status on.
rank=$1 ready=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" != "$rank" ]; then
  exec "$@"
fi
"$@" &
child=$!
(until [ -e "$ready" ]; do sleep 0.1; done; kill -KILL "$child") &
killer=$!
wait "$child"
status=$?
kill "$killer" 2>/dev/null
# 128 + SIGKILL: the killer's doing.
if [ "$status" -eq 137 ]; then
  exec sleep infinity
fi
exit "$status"
