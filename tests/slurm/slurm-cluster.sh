# A throwaway one-node Slurm cluster for tests, started by hand (no systemd), as root.
# Source this file, then:
#   slurm_cluster_start DIR   config, state, spool and logs under DIR; exports SLURM_CONF;
#                             returns 77 when Slurm or munge is not installed
#   slurm_cluster_stop        stops what slurm_cluster_start started, by PID
# No accounting: sacct does not work, poll squeue instead.

slurm_cluster_pids=()

slurm_cluster_log() { echo "slurm-cluster: $*" >&2; }

# Two free TCP ports, so that a cluster left over from another run (or another user's) does not
# collide with ours on the default 6817/6818.
slurm_cluster_free_ports() {
  python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

slurm_cluster_start_munge() {
  # A munged that already answers (the machine's own) is shared, not replaced.
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge /etc/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  # A socket left by a munged that died would make the new one refuse to start.
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  runuser -u munge -- munged --pid-file=/run/munge/munged.pid || return 1
  local i
  for i in $(seq 50); do
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
      slurm_cluster_pids+=("$(cat /run/munge/munged.pid)")
      return 0
    fi
    sleep 0.1
  done
  slurm_cluster_log "munged did not answer"
  return 1
}

slurm_cluster_write_conf() {
  local dir=$1 ctld_port=$2 slurmd_port=$3
  local cpus memory
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
  cat >"$dir/slurm.conf" <<EOF
ClusterName=framelift-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

# Runs until sinfo reports the node idle; the daemons are left running for the caller.
slurm_cluster_start() {
  local dir=$1 bin
  for bin in slurmctld slurmd sbatch squeue sinfo munged munge unmunge; do
    if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
      slurm_cluster_log "$bin is not installed (apt-get install slurm-wlm munge)"
      return 77
    fi
  done
  export PATH="$PATH:/usr/sbin"
  mkdir -p "$dir/state" "$dir/spool"
  local ports
  ports=$(slurm_cluster_free_ports) || return 1
  # shellcheck disable=SC2086
  slurm_cluster_write_conf "$dir" $ports
  export SLURM_CONF="$dir/slurm.conf"
  slurm_cluster_start_munge || return 1
  # -i: ignore any state from an earlier controller; the state folder is fresh anyway.
  slurmctld -i -f "$SLURM_CONF" || { slurm_cluster_log "slurmctld failed; see $dir/slurmctld.log"; return 1; }
  slurm_cluster_wait_pid "$dir/slurmctld.pid" || return 1
  slurmd -N localhost -f "$SLURM_CONF" || { slurm_cluster_log "slurmd failed; see $dir/slurmd.log"; return 1; }
  slurm_cluster_wait_pid "$dir/slurmd.pid" || return 1
  local i state=""
  for i in $(seq 100); do
    state=$(sinfo -h -N -n localhost -o %t 2>/dev/null || true)
    [ "$state" = "idle" ] && return 0
    sleep 0.3
  done
  slurm_cluster_log "node not idle after 30 s (state '$state'); logs in $dir"
  return 1
}

slurm_cluster_wait_pid() {
  local file=$1 i
  for i in $(seq 100); do
    if [ -s "$file" ]; then
      slurm_cluster_pids+=("$(cat "$file")")
      return 0
    fi
    sleep 0.1
  done
  slurm_cluster_log "no pid file $file"
  return 1
}

# Newest first: slurmd, slurmctld, then munged (only when we started it).
slurm_cluster_stop() {
  local i pid
  for ((i = ${#slurm_cluster_pids[@]} - 1; i >= 0; i--)); do
    pid=${slurm_cluster_pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  done
  slurm_cluster_pids=()
}
