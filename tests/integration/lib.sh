# shellcheck shell=bash
# Helpers for the cluster tests. Each test script sources this, runs real
# srun/sbatch against the local cluster (SLURM_CONF comes from CTest), and
# fails with a message saying what was expected and what came back.
set -euo pipefail

: "${SLURM_CONF:?SLURM_CONF must point at the test cluster (CTest sets it)}"
: "${DDP_SOURCE_DIR:?}"
PYTHON=/usr/bin/python3   # Debian's python3 has torch; a pyenv python3 on PATH may not
CLUSTER_NAME=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")
CLUSTER_DIR=$(dirname "$SLURM_CONF")
export PYTHON CLUSTER_NAME CLUSTER_DIR

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

# run CMD...: runs with a time limit, keeps stdout in $OUT, stderr in $ERR, code in $RC.
# The agent prefixes worker lines with "[rank R] "; OUT and ERR have it removed,
# RAW_OUT and RAW_ERR keep it.
run() {
  local out err
  out=$(mktemp) err=$(mktemp)
  set +e
  timeout 90 "$@" >"$out" 2>"$err"
  RC=$?
  set -e
  export RAW_OUT RAW_ERR
  RAW_OUT=$(cat "$out") RAW_ERR=$(cat "$err")
  OUT=$(sed 's/^\[rank [0-9]*\] //' "$out") ERR=$(sed 's/^\[rank [0-9]*\] //' "$err")
  rm -f "$out" "$err"
  if ((RC == 124)); then
    show "$*"
    diagnose
    fail "timed out after 90 s: $*"
  fi
}

# What the cluster looked like, for a test that timed out.
diagnose() {
  { echo "--- squeue:"; squeue -l; echo "--- sinfo:"; sinfo -N -l; echo "--- slurmctld.log (tail):"
    tail -n 30 "$CLUSTER_DIR/log/slurmctld.log"; } >&2 2>/dev/null || true
}

show() { printf -- '--- command: %s\n--- rc: %s\n--- stdout:\n%s\n--- stderr:\n%s\n' "$1" "${RC:-}" "${OUT:-}" "${ERR:-}" >&2; }

expect_rc() {  # expect_rc CODE DESCRIPTION
  [[ $RC == "$1" ]] || { show "$2"; fail "$2: exit code $RC, expected $1"; }
}
expect_failure() {  # expect_failure DESCRIPTION: any non-zero exit code
  [[ $RC != 0 ]] || { show "$1"; fail "$1: exit code 0, expected a failure"; }
}
expect_in() {  # expect_in TEXT NEEDLE DESCRIPTION
  [[ $1 == *"$2"* ]] || { show "$3"; fail "$3: expected to find '$2'"; }
}
expect_not_in() {
  [[ $1 != *"$2"* ]] || { show "$3"; fail "$3: did not expect '$2'"; }
}
expect_eq() {  # expect_eq ACTUAL EXPECTED DESCRIPTION
  [[ $1 == "$2" ]] || fail "$3: got '$1', expected '$2'"
}

# NodeAddr of a node as slurmctld publishes it.
node_addr() { scontrol show node "$1" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p'; }

# sbatch_wait ARGS...: submits, waits for the job to end (polling, faster than
# `sbatch --wait`), sets RC to the job's exit code.
sbatch_wait() {
  local id state deadline=$((SECONDS + 90))
  id=$(sbatch --parsable "$@") || fail "sbatch $* was refused"
  while ((SECONDS < deadline)); do
    state=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case $state in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.2 ;; *) break ;; esac
  done
  if ((SECONDS >= deadline)); then
    scontrol show job "$id" >&2 || true
    { echo "--- its steps:"; squeue -s -j "$id"
      local f; for f in $(scontrol show job "$id" | sed -n 's/.*Std\(Out\|Err\)=\([^ ]*\).*/\2/p' | sort -u); do
        echo "--- $f (tail):"; tail -n 40 "$f"; done; } >&2 2>/dev/null || true
    diagnose
    fail "job $id did not end within 90 s"
  fi
  RC=$(scontrol show job "$id" | sed -n 's/.*ExitCode=\([0-9]*\):.*/\1/p')
}

# --- background jobs, for the failure tests ---------------------------------

# bg_srun NAME ARGS...: srun ARGS in the background, output in $WORK/NAME.out and
# .err; its pid in BG_PID.
bg_srun() {
  local name=$1; shift
  srun "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  export BG_PID=$!
}

# wait_lines FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching.
wait_lines() {
  local deadline=$((SECONDS + $4)) n
  while ((SECONDS < deadline)); do
    n=$(grep -c -- "$2" "$1" 2>/dev/null || true)
    ((n >= $3)) && return 0
    sleep 0.2
  done
  echo "--- $1:" >&2; cat "$1" >&2 || true
  fail "waited $4 s for $3 lines matching '$2' in $1"
}

# wait_exit PID SECONDS: waits for a background job; its exit code in RC.
# Failing to end in time is a hang, the very thing these tests exist to catch.
wait_exit() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$1" 2>/dev/null; then diagnose; fail "process $1 still running after $2 s"; fi
  set +e; wait "$1"; RC=$?; set -e
}

# Processes of this cluster's nodes whose command line contains PATTERN
# (searched in every node's network namespace).
node_processes() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}' | grep "^sddp-$CLUSTER_NAME-n"); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | grep -q -- "$1" && echo "$pid"
    done
  done
  return 0
}

# For the node-loss tests: Slurm's release, and srun's exit code after a step
# lost a node although the training went on (0 on 22.05; 1 from 23.02 on, set
# in src/api/step_launch.c so that scripts notice the node failure).
slurm_version() { srun --version | awk '{print $2}'; }
srun_rc_after_node_failure() { if [[ $(slurm_version) == 22.05.* ]]; then echo 0; else echo 1; fi; }
# Wall-clock stamps and the seconds between two of them, one decimal.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# node_back INDEX: a node a test cut off or crashed answers Slurm again: its
# link up, its slurmd started if it is gone, and the node idle within 60 s
# (ReturnToService=2 brings a DOWN node back once its slurmd answers). A
# slurmd that dies again at start is started once more after 20 s, and the
# failure shows that node's log.
node_back() {
  local node=$CLUSTER_NAME-n$1 deadline=$((SECONDS + 60)) restarted_at=$SECONDS
  ip link set "sddp$CLUSTER_NAME$1" up 2>/dev/null || true
  node_slurmd_runs "$1" || "$DDP_SOURCE_DIR/tests/cluster/cluster.sh" start-slurmd --name "$CLUSTER_NAME" "$1"
  until [[ $(sinfo -h -n "$node" -o %t) == idle ]]; do
    if ((SECONDS - restarted_at >= 20)) && ! node_slurmd_runs "$1"; then
      echo "node_back: $node's slurmd is gone again; its log:" >&2
      tail -n 20 "$CLUSTER_DIR/log/slurmd-$node.log" >&2 2>/dev/null || true
      "$DDP_SOURCE_DIR/tests/cluster/cluster.sh" start-slurmd --name "$CLUSTER_NAME" "$1"
      restarted_at=$SECONDS
    fi
    if ((SECONDS >= deadline)); then
      diagnose
      { echo "--- slurmd-$node.log (tail):"; tail -n 30 "$CLUSTER_DIR/log/slurmd-$node.log"
        echo "--- processes in its namespace:"; node_ps "$1"; } >&2 2>/dev/null || true
      fail "$node did not come back within 60 s"
    fi
    sleep 0.5
  done
}
# A live (not zombie) slurmd in node INDEX's namespace; its processes.
node_ps() { ip netns pids "sddp-$CLUSTER_NAME-n$1" 2>/dev/null | xargs -r ps -o pid=,stat=,comm= -p 2>/dev/null; }
node_slurmd_runs() { node_ps "$1" | awk '$3 == "slurmd" && $2 !~ /^Z/ { found = 1 } END { exit !found }'; }

# The largest difference between two --dump-params files (raw float32) of
# COUNT parameters each; fails when either has another size.
max_param_diff() {  # max_param_diff FILE1 FILE2 COUNT
  "$PYTHON" - "$@" <<'PY'
import struct, sys
a, b = (open(f, 'rb').read() for f in sys.argv[1:3])
assert len(a) == len(b) == 4 * int(sys.argv[3]), (len(a), len(b))
x, y = (struct.unpack('%df' % (len(v) // 4), v) for v in (a, b))
print(max(abs(p - q) for p, q in zip(x, y)))
PY
}

# The step's rendezvous port, from node 0's --ddp-verbose summary in FILE.
rdzv_port_from() { sed -n 's/.*rendezvous port \([0-9]*\).*/\1/p' "$1" | head -n 1; }

WORK=$(mktemp -d)
export WORK
cleanup_work() { rm -rf "$WORK"; }
trap cleanup_work EXIT

# --- cgroups, for the bad-node tests (v1 and v2, whichever the machine has) --

# cgroup_mount TYPE CONTROLLER: the mount point of a cgroup (v1) hierarchy
# with CONTROLLER, or of the cgroup2 one (mountinfo: after "-", the type and
# the super options).
cgroup_mount() {
  awk -v t="$1" -v c="$2" '{ for (i = 7; i <= NF && $i != "-"; i++) ;
    if ($(i + 1) == t && (t == "cgroup2" || ("," $(i + 3) ",") ~ ("," c ","))) { print $5; exit } }' /proc/self/mountinfo
}
# cgroup_make CONTROLLER NAME: a fresh cgroup of CONTROLLER (memory, cpu)
# named NAME; its directory on stdout. v1 where the controller has its own
# hierarchy (/sys/fs/cgroup/CONTROLLER, also "cpu,cpuacct"), else v2 with the
# controller enabled below the root.
cgroup_make() {
  local v1 dir
  v1=$(cgroup_mount cgroup "$1")
  if [[ -n $v1 ]]; then
    dir=$v1/$2
  else
    v1=$(cgroup_mount cgroup2 "")
    [[ -n $v1 ]] && grep -qw "$1" "$v1/cgroup.controllers" || fail "no $1 cgroup controller on this machine"
    echo "+$1" >"$v1/cgroup.subtree_control" || fail "cannot enable the $1 controller in $v1"
    dir=$v1/$2
  fi
  mkdir -p "$dir" || fail "cannot make cgroup $dir"
  echo "$dir"
}
# cgroup_limit DIR WHAT VALUE: memory (bytes) or cpu (percent of one CPU).
cgroup_limit() {
  case $2 in
    memory)
      if [[ -e $1/memory.limit_in_bytes ]]; then
        echo "$3" >"$1/memory.limit_in_bytes"
        [[ ! -e $1/memory.memsw.limit_in_bytes ]] || echo "$3" >"$1/memory.memsw.limit_in_bytes"
      else
        echo "$3" >"$1/memory.max"
        [[ ! -e $1/memory.swap.max ]] || echo 0 >"$1/memory.swap.max"
      fi ;;
    cpu)
      if [[ -e $1/cpu.cfs_quota_us ]]; then
        echo 100000 >"$1/cpu.cfs_period_us"
        echo $(($3 * 1000)) >"$1/cpu.cfs_quota_us"
      else
        echo "$(($3 * 1000)) 100000" >"$1/cpu.max"
      fi ;;
  esac
}
# cgroup_put DIR PID...: moves processes (each with all its threads) into DIR.
cgroup_put() {
  local dir=$1 pid; shift
  for pid in "$@"; do echo "$pid" >"$dir/cgroup.procs" || fail "cannot move $pid into $dir"; done
}
# cgroup_drop DIR: its processes back to the parent, the cgroup removed.
cgroup_drop() {
  [[ -d $1 ]] || return 0
  local pid
  for pid in $(cat "$1/cgroup.procs" 2>/dev/null); do echo "$pid" >"$(dirname "$1")/cgroup.procs" 2>/dev/null || true; done
  rmdir "$1" 2>/dev/null || true
}
# slurmd_pid INDEX: node INDEX's slurmd.
slurmd_pid() { cat "$(dirname "$SLURM_CONF")/run/slurmd-$CLUSTER_NAME-n$1.pid"; }
