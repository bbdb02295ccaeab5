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

show() { printf -- '--- command: %s\n--- rc: %s\n--- stdout:\n%s\n--- stderr:\n%s\n' "$1" "$RC" "$OUT" "$ERR" >&2; }

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
# (ReturnToService=2 brings a DOWN node back once its slurmd answers).
node_back() {
  local node=$CLUSTER_NAME-n$1 ns=sddp-$CLUSTER_NAME-n$1 deadline=$((SECONDS + 60))
  ip link set "sddp$CLUSTER_NAME$1" up 2>/dev/null || true
  if ! ip netns pids "$ns" 2>/dev/null | xargs -r ps -o comm= -p 2>/dev/null | grep -qx slurmd; then
    "$DDP_SOURCE_DIR/tests/cluster/cluster.sh" start-slurmd --name "$CLUSTER_NAME" "$1"
  fi
  until [[ $(sinfo -h -n "$node" -o %t) == idle ]]; do
    ((SECONDS < deadline)) || { diagnose; fail "$node did not come back within 60 s"; }
    sleep 0.5
  done
}

# The step's rendezvous port, from node 0's --ddp-verbose summary in FILE.
rdzv_port_from() { sed -n 's/.*rendezvous port \([0-9]*\).*/\1/p' "$1" | head -n 1; }

WORK=$(mktemp -d)
export WORK
cleanup_work() { rm -rf "$WORK"; }
trap cleanup_work EXIT
