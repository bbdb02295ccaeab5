#!/usr/bin/env bash
# Slurm stopping a two-node --ddp step, two ways.
#
# 1. Preempted by a job of a higher-priority partition (the test cluster runs
#    PreemptType=preempt/partition_prio, PreemptMode=CANCEL, GraceTime=10 on
#    its default partition: cluster.sh --preemption). Slurm sends the step's
#    tasks SIGTERM while the job is still RUNNING, its Reason None: only
#    scontrol's PreemptTime says why. Node 0's root cause must say the job was
#    preempted, class slurm_stop, and not blame a worker, a lost node or the
#    user's scancel.
# 2. The signals race: every node's agent gets SIGTERM, in no set order. Here
#    node 1's agent alone gets it, the order in which node 0 could take node
#    1's end for a loss ("node 1 ... was lost: its agent's connection ended",
#    class node_lost): node 1 says SIGNALLED first, so the run ends as
#    Slurm's stop.
# Either way no agent leaves its run directory behind in TMPDIR.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

cat >"$WORK/sleeper.py" <<'PY'
import os, sys, time
open(os.path.join(sys.argv[1], os.environ["RANK"]), "w").close()
time.sleep(300)
PY
mapfile -t nodes < <(scontrol show hostnames "$(sinfo -h -p debug -o %N)")
two="${nodes[0]},${nodes[1]}"

# start_step NAME [SRUN OPTIONS...]: a two-node step of sleeping workers, its
# TMPDIR $WORK/NAME.tmp, once both workers are up; its srun's PID in $step.
start_step() {
  local name=$1 deadline=$((SECONDS + 60))
  shift
  mkdir -p "$WORK/$name.ready" "$WORK/$name.tmp"
  TMPDIR=$WORK/$name.tmp srun -w "$two" -N2 --ddp=cpu --ddp-procs=1 "$@" "$PYTHON" "$WORK/sleeper.py" \
    "$WORK/$name.ready" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  step=$!
  until [[ -e $WORK/$name.ready/0 && -e $WORK/$name.ready/1 ]]; do
    ((SECONDS < deadline)) || { kill "$step" 2>/dev/null; fail "$name: the workers did not start within 60 s"; }
    kill -0 "$step" 2>/dev/null || { cat "$WORK/$name.err" >&2; fail "$name: the step ended before its workers started"; }
    sleep 0.5
  done
}

# end_step NAME: its srun's end; the step must have failed, as Slurm's stop,
# leaving no run directory.
end_step() {
  RC=0
  wait_exit "$step" 60
  OUT=$(cat "$WORK/$1.out") ERR=$(cat "$WORK/$1.err")
  export RC OUT  # for show(), on a failure
  [[ $RC != 0 ]] || { show "$1"; fail "$1: the stopped step exited 0"; }
  expect_in "$ERR" "class slurm_stop" "$1: Slurm's stop: no restart, not the node's fault"
  expect_not_in "$ERR" "was lost" "$1: no node is taken for lost"
  expect_eq "$(ls -A "$WORK/$1.tmp")" "" "$1: no agent's run directory is left in TMPDIR"
}

# --- 1. Preempted: both nodes wanted whole by the urgent partition -------------
start_step preempted
urgent=$(timeout 60 srun -p urgent -w "$two" -N2 --exclusive hostname 2>&1) ||
  { kill "$step" 2>/dev/null; fail "the urgent job did not run: $urgent"; }
end_step preempted
expect_in "$ERR" "root cause: Slurm stopped the job: it was preempted by a job of higher priority" \
  "node 0 names the preemption (scontrol's PreemptTime) as the root cause"
expect_not_in "$ERR" "scancel JOB.STEP" "a preemption is not called a cancelled step"

# --- 2. Node 1's agent signalled before node 0's ---------------------------------
start_step node1_first --ddp-verbose
mapfile -t agent < <(ip netns pids "sddp-$CLUSTER_NAME-n1" | xargs -r ps -o pid=,comm= -p | awk '$2 == "ddp-agent" { print $1 }')
[[ ${#agent[@]} == 1 ]] || { kill "$step"; fail "expected one ddp-agent on node 1, found ${#agent[@]}"; }
kill -TERM "${agent[0]}"
end_step node1_first
expect_in "$ERR" "stopping: node 1 (" "node 0 says which node heard Slurm's stop first (--ddp-verbose)"
expect_in "$ERR" "its agent received SIGTERM: Slurm is stopping the job or the step" "and what it heard"
expect_in "$ERR" "root cause: Slurm stopped this step" "node 0 asks slurmctld why (here: the job goes on)"
pass "a preempted two-node --ddp step: the root cause says so (class slurm_stop) while the job was still RUNNING; \
node 1's agent signalled first is Slurm's stop, not a lost node; no run directory left"
