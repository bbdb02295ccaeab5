#!/usr/bin/env bash
# Every root cause carries its class (wire/failure_class.hpp): the script's
# exception, a crash, the OOM killer in the node's memory cgroup (v1 or v2),
# and the verdict lands in the job's Comment after the user's own; a node
# whose failures are its own fault twice is taken out for a spare.
# (Slurm's own stop, scancel, is asserted in fail_fast.sh; a GPU's "CUDA out
# of memory" and NCCL errors are classed from their text: unit.failure_class.)
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
script="$WORK/fail.py"
cat >"$script" <<'PY'
import os, sys, time
rank, how = int(os.environ["RANK"]), sys.argv[1]
print(f"ready rank={rank}", flush=True)
if rank == 1:
    if how == "raise":
        raise ValueError("shard 7 is corrupt")
    if how == "segv":
        import ctypes
        ctypes.string_at(0)
    if how == "oom":
        hog = [b"x" * (64 << 20) for _ in range(64)]  # 4 GiB, touched
if how == "gpu" and os.environ["SLURMD_NODENAME"].endswith("-n1"):  # a bad GPU on node 1, whoever runs there
    sys.exit("RuntimeError: CUDA error: an illegal memory access was encountered")
if how == "gpu":
    print(f"rank {rank} finished on {os.environ['SLURMD_NODENAME']}", flush=True)
    sys.exit(0)
if how == "requeue":  # Slurm's warning (USR1): save and end, as --ddp-requeue asks
    import signal
    signal.signal(signal.SIGUSR1, lambda *_: sys.exit(0))
    print(f"rank {rank} running on {os.environ['SLURMD_NODENAME']}", flush=True)
time.sleep(30)
PY

# --- the script's exception, in the job's Comment after the user's own --------
sbatch_wait -N2 -o "$WORK/raise.out" -e "$WORK/raise.err" --comment "sweep 12" \
  --wrap "srun --ddp=cpu $PYTHON -u $script raise"
ERR=$(cat "$WORK/raise.err") OUT=""
expect_in "$ERR" "ValueError: shard 7 is corrupt" "the traceback is shown"
expect_in "$ERR" "class exception: the script's own exception" "a traceback is the script's exception"
job=$(squeue -h -t all -u "$(id -un)" -o %i | sort -n | tail -n 1)
comment=$(squeue -h -t all -j "$job" -o %k)
expect_in "$comment" "sweep 12 | ddp: step $job.0: class exception: worker rank 1 (local rank 0) on node 1" \
  "the job's Comment keeps the user's text and says the class and the worker"

# --- a crash -------------------------------------------------------------------
run srun -N2 --ddp=cpu "$PYTHON" -u "$script" segv
expect_rc 139 "a worker that segfaults"
expect_in "$ERR" "was killed by SIGSEGV" "the signal is named"
expect_in "$ERR" "class crash: a crash" "SIGSEGV is a crash"

# --- a command that cannot be executed: the step could not begin, no restart ----
run srun -N2 --ddp=cpu --ddp-restarts=3 /no/such/train.py
expect_rc 127 "a command that is not there"
expect_in "$ERR" "could not be started: cannot execute /no/such/train.py: No such file or directory" \
  "the root cause names the command and why"
expect_in "$ERR" "class setup: the step could not begin; no restart" "its class is setup, which is never restarted"
expect_not_in "$ERR" "restarting every worker" "three restarts left, none used"

# --- the OOM killer, in node 1's memory cgroup ------------------------------------
cg=$(cgroup_make memory "ddp-test-oom-$$")
trap 'cgroup_drop "$cg"; cleanup_work' EXIT
cgroup_limit "$cg" memory $((512 << 20))
cgroup_put "$cg" "$(slurmd_pid 1)"  # its steps' processes inherit it
run srun -N2 --ddp=cpu "$PYTHON" -u "$script" oom
expect_rc 137 "a worker the OOM killer ended"
expect_in "$ERR" "root cause: worker rank 1 (local rank 0) on node 1" "the OOM-killed worker is the root cause"
expect_in "$ERR" "class host_oom: out of host memory" "its cgroup's OOM count names the OOM killer"
cgroup_drop "$cg"
# A SIGKILL with no OOM behind it is not called one.
bg_srun kill -N2 --ddp=cpu "$PYTHON" -u "$script" none
wait_lines "$WORK/kill.out" "ready rank=" 2 60
kill -KILL "$(pgrep -f "^$PYTHON -u $script none" | tail -n 1)"
wait_exit "$BG_PID" 30
ERR=$(cat "$WORK/kill.err")
expect_in "$ERR" "class killed: killed from outside" "a plain SIGKILL is not an OOM"

# --- a node blamed twice is taken out: the spare takes its place ------------------
# (the CUDA error is the text PyTorch prints; no GPU here: classed from the text)
# The site's BadNodeHook hears of it, run as root by the plugin on node 0 when
# the step ends: the main cluster reads the default site config, made here.
site_conf=/etc/slurm/ddp.conf
[[ ! -e $site_conf ]] || fail "$site_conf exists: this test makes its own (BadNodeHook=); move it away"
hook_dir=$(mktemp -d /run/ddp-hook-XXXXXX)  # root's, 0700, in a directory only root can write to (not /tmp)
cat >"$hook_dir/hook" <<SH
#!/bin/sh
env | grep -E '^(SLURM_JOB_ID|SLURM_STEP_ID|SLURM_JOB_USER|DDP_)' | sort >"$hook_dir/said-\$SLURM_JOB_ID-\$DDP_BAD_NODE"
echo "reported \$DDP_BAD_NODE"
SH
chmod 755 "$hook_dir/hook"
echo "BadNodeHook=$hook_dir/hook" >"$site_conf"
trap 'rm -rf "$hook_dir" "$site_conf"; cleanup_work' EXIT
run srun -N3 -k --ddp=cpu --ddp-spares=1 --ddp-restarts=2 "$PYTHON" -u "$script" gpu
expect_rc 0 "the run, once node 1 is out"
expect_in "$ERR" "class cuda_nccl: a CUDA or NCCL error" "the CUDA error is classed"
expect_in "$ERR" "node 1 (" "node 1 is named"
expect_in "$ERR" "is blamed twice (cuda_nccl in attempt 0; cuda_nccl in attempt 1): it is taken out before the job's next attempt" "blamed twice"
expect_in "$ERR" "spare node 2 (" "the spare takes node 1's place"
expect_in "$OUT" "rank 1 finished on $CLUSTER_NAME-n2" "rank 1 ran on the spare in the last attempt"
# (slurmstepd runs it at the step's end, after srun may have returned)
deadline=$((SECONDS + 10))
until ls "$hook_dir"/said-*-"$CLUSTER_NAME-n1" >/dev/null 2>&1 || ((SECONDS > deadline)); do sleep 0.2; done
said=$(cat "$hook_dir"/said-*-"$CLUSTER_NAME-n1" 2>/dev/null) || {
  tail -n 20 "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log" >&2
  fail "the BadNodeHook was not run for $CLUSTER_NAME-n1"
}
expect_in "$said" "DDP_BAD_NODE=$CLUSTER_NAME-n1" "the hook is told the node"
expect_in "$said" "DDP_BAD_NODE_REASONS=blamed twice (cuda_nccl in attempt 0; cuda_nccl in attempt 1)" "and why"
expect_in "$said" "DDP_CLAIMED_BY=the job's own agents (user $(id -un)), not verified" "and who claims it"
reports=("$hook_dir"/said-*)
expect_eq "${#reports[@]}" "1" "the hook ran for the bad node only"

# A report forged by the job's user (anything can write to node 0's FIFO): a
# node outside the job is refused in slurmd's log; one of the job is only
# reported, as claimed by the user, and no node is drained.
run srun -N2 --ddp=cpu /bin/sh -c 'if [ "$RANK" = 0 ]; then
  printf "node=%s reasons=forged\nnode=login9 reasons=forged\n" "$SLURMD_NODENAME" \
    >"/run/slurm-ddp/$SLURM_JOB_ID.$SLURM_STEP_ID"; fi'
expect_rc 0 "a step that forges a report"
deadline=$((SECONDS + 10))
until ls "$hook_dir"/said-*-"$CLUSTER_NAME-n0" >/dev/null 2>&1 || ((SECONDS > deadline)); do sleep 0.2; done
said=$(cat "$hook_dir"/said-*-"$CLUSTER_NAME-n0" 2>/dev/null) || fail "the hook was not run for the forged line"
expect_in "$said" "DDP_BAD_NODE_REASONS=forged" "a forged line about a node of the job is passed on, as a claim"
reports=("$hook_dir"/said-*)
expect_not_in "${reports[*]}" "login9" "a node outside the job is never passed on"
expect_in "$(cat "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log")" \
  "1 line of node 0's report was refused (first: line 2: node login9 is not a node of this step)" \
  "and is named in slurmd's log"
expect_eq "$(sinfo -h -n "$CLUSTER_NAME-n0" -o %t)" "idle" "node 0 is not drained"
rm -f "$site_conf"

# --- ... and out of the job's requeue: requeued, then excluded ----------------------
cat >"$WORK/requeue.sh" <<JOB
#!/bin/bash
srun -k --ddp=cpu --ddp-spares=1 --ddp-restarts=2 --ddp-requeue "$PYTHON" -u "$script" requeue
JOB
sed -i 's/^if how == "gpu" and/if how in ("gpu", "requeue") and/' "$script"
id=$(sbatch --parsable -N3 -o "$WORK/requeue.out" -e "$WORK/requeue.err" "$WORK/requeue.sh") || fail "sbatch refused"
wait_lines "$WORK/requeue.out" "rank 1 running on $CLUSTER_NAME-n2" 1 60
scancel --signal=USR1 "$id"
# Restarts=1 shows at the requeue, before node 0's slurmstepd adds to
# ExcNodeList as the step ends: wait for both (and no hold), 60 s at most.
requeue_done() {
  info=$(scontrol show job "$id")
  [[ $info == *Restarts=1* && $info == *"ExcNodeList=$CLUSTER_NAME-n1"* && $info != *JobHeldUser* &&
     $info != *job_requeued_in_held_state* ]]
}
deadline=$((SECONDS + 60))
until requeue_done || ((SECONDS > deadline)); do sleep 0.2; done
scancel "$id"
expect_in "$info" "Restarts=1" "node 0 requeued the job"
# (Slurm ends the step at the requeue, and the requeued job's output replaces
# the first run's: node 0's slurmstepd says what it did in slurmd's log.)
[[ $info == *"ExcNodeList=$CLUSTER_NAME-n1"* ]] ||
  fail "the requeued job does not exclude node 1 (scontrol: $(grep -o 'ExcNodeList=[^ ]*' <<<"$info")); \
node 0's slurmd said: $(grep -e "\[$id\.0\] ddp:" "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log" | tail -5);
slurmctld said: $(grep -i -e "JobId=$id" -e "job $id" -e exc_nodes "$CLUSTER_DIR/log/slurmctld.log" | tail -25)"
expect_not_in "$info" "JobHeldUser" "and was released"
expect_not_in "$info" "job_requeued_in_held_state" "and was released"

# Node 0's agent killed in the middle of the requeue: srun in the batch
# script gets Slurm's SIGTERM when the job is requeued and forwards SIGKILL to
# the step at once (srun_job.c), so nothing node 0's agent starts after the
# requeue is sure to run. Here its scontrol requeue takes 30 s to return, and
# any update waits 30 s first: the exclusion must still land (node 0's
# slurmstepd sets it as the step ends: spank/requeue_exclusion.hpp), and the
# job must not be left held (as requeuehold, update, release once did).
mkdir -p "$WORK/slow"
printf '#!/bin/sh\ncase "$1" in\n  requeue) %q "$@"; rc=$?; sleep 30; exit $rc ;;\n  update) sleep 30 ;;\nesac\nexec %q "$@"\n' \
  "$(command -v scontrol)" "$(command -v scontrol)" >"$WORK/slow/scontrol"
chmod +x "$WORK/slow/scontrol"
sed -i "2i export PATH=$WORK/slow:\$PATH" "$WORK/requeue.sh"
id=$(sbatch --parsable -N3 -o "$WORK/slow.out" -e "$WORK/slow.err" "$WORK/requeue.sh") || fail "sbatch refused"
wait_lines "$WORK/slow.out" "rank 1 running on $CLUSTER_NAME-n2" 1 60
scancel --signal=USR1 "$id"
deadline=$((SECONDS + 60))
until requeue_done || ((SECONDS > deadline)); do sleep 0.2; done
scancel "$id"
expect_in "$info" "Restarts=1" "agent killed mid-requeue: the job was requeued"
expect_in "$info" "ExcNodeList=$CLUSTER_NAME-n1" "and excludes node 1 all the same"
expect_not_in "$info" "job_requeued_in_held_state" "and was not left held"
expect_not_in "$info" "JobHeldUser" "(nor held by the user)"
pass "failures classed: exception (in the Comment), crash, host OOM in a memory cgroup, killed, CUDA twice: taken out \
of later attempts, reported to the site's BadNodeHook (a forged report checked), and kept from the requeued job (ExcNodeList)"
