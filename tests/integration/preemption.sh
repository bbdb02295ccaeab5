#!/usr/bin/env bash
# A --ddp step preempted by a job of a higher-priority partition (the test
# cluster runs PreemptType=preempt/partition_prio, PreemptMode=CANCEL,
# GraceTime=10 on its default partition: cluster.sh --preemption). Slurm
# sends the step's tasks SIGTERM while the job is still RUNNING, its Reason
# None: only scontrol's PreemptTime says why. Node 0's root cause must say the
# job was preempted, class slurm_stop, and not blame a worker or the user's
# scancel. (Before: "Slurm stopped this step while the job goes on ... the
# step was cancelled (scancel JOB.STEP) or srun was interrupted", Slurm
# 22.05, 2026-11-27.) One node: across nodes the SIGTERMs race, and a node 1
# whose agent ends first is taken for a lost node (seen once in five runs in
# the Debian 13 chroot, 2026-11-27): not yet fixed, so not tested here.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/ready"
cat >"$WORK/sleeper.py" <<'PY'
import os, sys, time
open(os.path.join(sys.argv[1], os.environ["RANK"]), "w").close()
time.sleep(300)
PY
nodes=$(sinfo -h -p debug -o %N)
# Both jobs on the same node, the urgent one whole: it can only start by
# preempting the first.
node=$(scontrol show hostnames "$nodes" | head -n 1)
srun -w "$node" -N1 --ddp=cpu --ddp-procs=2 "$PYTHON" "$WORK/sleeper.py" "$WORK/ready" >"$WORK/out" 2>"$WORK/err" &
step=$!
deadline=$((SECONDS + 60))
until [[ -e $WORK/ready/0 && -e $WORK/ready/1 ]]; do
  ((SECONDS < deadline)) || { kill "$step" 2>/dev/null; fail "the --ddp step's workers did not start within 60 s"; }
  kill -0 "$step" 2>/dev/null || { cat "$WORK/err" >&2; fail "the --ddp step ended before its workers started"; }
  sleep 0.5
done
urgent=$(timeout 60 srun -p urgent -w "$node" -N1 --exclusive hostname 2>&1) ||
  { kill "$step" 2>/dev/null; fail "the urgent job did not run: $urgent"; }
RC=0
wait "$step" || RC=$?
OUT=$(cat "$WORK/out") ERR=$(cat "$WORK/err")
export RC OUT  # for show(), on a failure
[[ $RC != 0 ]] || { show "the preempted step"; fail "the preempted step exited 0"; }
expect_in "$ERR" "root cause: Slurm stopped the job: it was preempted by a job of higher priority" \
  "node 0 names the preemption (scontrol's PreemptTime) as the root cause"
expect_in "$ERR" "class slurm_stop" "a preemption is a Slurm stop: no restart, not the node's fault"
expect_not_in "$ERR" "scancel JOB.STEP" "a preemption is not called a cancelled step"
pass "a preempted --ddp step: the root cause says so (class slurm_stop), while the job was still RUNNING"
