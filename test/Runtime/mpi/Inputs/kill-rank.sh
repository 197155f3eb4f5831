#!/bin/sh
# kill-rank.sh RANK SECONDS COMMAND...: runs COMMAND as this MPI rank; on rank
# RANK, kills it with SIGKILL after SECONDS, as a crash would, and then stays
# (the job's abort ends it), so that the launcher does not see the rank end
# and leaves the other ranks to find the loss themselves.
rank=$1 seconds=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" != "$rank" ]; then
  exec "$@"
fi
"$@" &
child=$!
sleep "$seconds"
kill -KILL "$child"
sleep 120
