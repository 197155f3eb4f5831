#!/bin/sh
# stop-in-creation.sh RANK COMMAND...: runs COMMAND as this MPI rank; on rank
# RANK, under gdb, which stops it for good (every thread: its heartbeat goes
# silent) when it enters MPI_Comm_create_group, as a host that hangs there
# would (stop-in-creation.gdb), until the job's abort ends it. A COMMAND
# that never gets there passes its exit status on.
rank=$1
shift
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" != "$rank" ]; then
  exec "$@"
fi
exec gdb -q -batch -x "$(dirname "$0")/stop-in-creation.gdb" --args "$@" \
  >/dev/null 2>&1
