#!/bin/sh
# A one-node Slurm cluster on this machine for the grid's batch-array test:
# munged, slurmctld and slurmd with their own key, configuration, ports,
# state and logs, all under DIR.
#
#   slurm_cluster.sh start DIR   start it; prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   slurm_cluster.sh stop DIR    stop it (the daemons it started, by their pid files)
#
# Exit status of start: 0 running; 77 Slurm or munge is not installed (one
# line says what is missing); 1 it did not come up (the daemons' last log
# lines follow).  Debian's packages: slurmctld slurmd slurm-client munge
# (scripts/test-deps.sh installs them).
set -u
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

stop() {
    if [ -f "$dir/slurm.conf" ] && command -v scontrol >/dev/null 2>&1; then
        # jobs first: their steps would outlive the daemons
        export SLURM_CONF="$dir/slurm.conf"
        scancel -u "$(id -un)" >/dev/null 2>&1
        i=0
        while [ $i -lt 100 ] && [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.1; i=$((i + 1)); done
        scontrol shutdown >/dev/null 2>&1
    fi
    for p in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
        [ -f "$p" ] || continue
        pid=$(cat "$p")
        # wait for it to go after the shutdown, then make sure
        i=0
        while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
        kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
        rm -f "$p"
    done
}

if [ "$cmd" = stop ]; then
    stop
    exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for b in munged slurmctld slurmd sbatch squeue scontrol; do
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
        echo "$b is not installed (Debian: slurmctld slurmd slurm-client munge; scripts/test-deps.sh)"
        exit 77
    fi
done
PATH="$PATH:/usr/sbin"

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || exit 1
chmod 711 "$dir/munge"
# munge wants a key only its user can read; a fresh one per cluster
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$dir/munge/munge.key"
munged -f --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" || { echo "munged did not start:"; tail -3 "$dir/munge/munged.log"; exit 1; }

# two free ports on loopback, so that several clusters can run at once
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
user=$(id -un)
cat > "$dir/slurm.conf" <<EOF
ClusterName=pcgtest$$
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=pcgnode NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" || { echo "slurmctld did not start:"; tail -5 "$dir/log/slurmctld.log"; stop; exit 1; }
slurmd -f "$SLURM_CONF" -N pcgnode || { echo "slurmd did not start:"; tail -5 "$dir/log/slurmd.log"; stop; exit 1; }
i=0
while [ $i -lt 300 ]; do
    state=$(sinfo -h -n pcgnode -o %t 2>/dev/null)
    case "$state" in idle*) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
    sleep 0.1
    i=$((i + 1))
done
echo "the node did not become idle (state '${state:-?}'):"
tail -3 "$dir/log/slurmctld.log" "$dir/log/slurmd.log"
stop
exit 1
