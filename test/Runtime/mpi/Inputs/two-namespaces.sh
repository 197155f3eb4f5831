#!/bin/sh
# two-namespaces.sh [--cut-link READY] COMMAND...
#
# Runs COMMAND (an Open MPI mpirun line) as if on two hosts: two network
# namespaces of this machine joined by a veth pair, two slots each, with
# Open MPI's daemons and transport on TCP over that pair only. With
# --cut-link, the link stops carrying packets once the file READY exists
# (overlap-run --ready-file: every rank is about to run its steps and hears
# every other's heartbeat), and carries them again once no overlap-run is
# left on the second host (its ranks report the loss, then abort, and their
# abort's watchdog ends them, as their launcher cannot reach them; at the
# latest 60 s after the cut), so that their output reaches the launcher and
# it can clean up.
# Each side's route to the other becomes a blackhole, as when a cable or a
# switch between two hosts fails. (Taking an interface down instead makes
# the kernel refuse that side's sends at once, which Open MPI's TCP
# transport reports and aborts on by itself.) Needs root, ip(8) and
# unshare(1). Everything it creates is removed on exit.
set -eu
ready=""
if [ "${1:-}" = "--cut-link" ]; then
  ready=$2
  shift 2
fi
id=$$
a=ovl${id}a b=ovl${id}b
net=10.$((200 + id % 50)).$((id / 50 % 250)).
work=$(mktemp -d)
cleanup() {
  for ns in "$a" "$b"; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

ip netns add "$a"
ip netns add "$b"
ip link add "$a" type veth peer name "$b"
ip link set "$a" netns "$a"
ip link set "$b" netns "$b"
ip -n "$a" addr add "${net}1/24" dev "$a"
ip -n "$b" addr add "${net}2/24" dev "$b"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$ns" up
done

# Open MPI starts its daemon on the second "host" with this instead of ssh.
cat > "$work/agent" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift;; *) break;; esac; done
host=\$1; shift
case "\$host" in
  ${net}1) ns=$a ;;
  ${net}2) ns=$b ;;
  *) echo "two-namespaces.sh: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns; \$*"
AGENT
chmod +x "$work/agent"
printf '%s slots=2\n%s slots=2\n' "${net}1" "${net}2" > "$work/hosts"
export OMPI_MCA_plm_rsh_agent="$work/agent"
export OMPI_MCA_orte_default_hostfile="$work/hosts"
export OMPI_MCA_btl=tcp,self
export OMPI_MCA_btl_tcp_if_include="${net}0/24"
export OMPI_MCA_oob_tcp_if_include="${net}0/24"

if [ -n "$ready" ]; then
  (until [ -e "$ready" ]; do sleep 0.1; done
   ip -n "$a" route add blackhole "${net}2/32"
   ip -n "$b" route add blackhole "${net}1/32"
   tries=0
   while [ "$tries" -lt 600 ] &&
         ip netns pids "$b" | xargs -r ps -o comm= -p | grep -qx overlap-run; do
     sleep 0.1
     tries=$((tries + 1))
   done
   ip -n "$a" route del blackhole "${net}2/32"
   ip -n "$b" route del blackhole "${net}1/32") &
  cutter=$!
fi
status=0
ip netns exec "$a" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$a" "$@" ||
  status=$?
# A run that ended before the cut (or never started) leaves the cutter
# waiting: the namespaces go with it.
if [ -n "$ready" ]; then kill "$cutter" 2>/dev/null || true; fi
wait
exit $status
