#!/usr/bin/env bash
# Spare nodes (--ddp-spares) on real daemons (a 3-node cluster with
# SlurmdTimeout=10): one node of a 3-node step waits; when a training node
# is lost, the spare takes its place and every worker resumes from the newest
# snapshot, with the same ranks and world size.
#   1. ddp-train, node 1's network cut after epoch 3: the run resumes on nodes
#      0 and 2 and ends with exactly the parameters of an uninterrupted run.
#   2. PyTorch (tests/integration/fixtures/resume.py, the seeds' snapshot pattern), node 1
#      crashed (SIGKILL to every process on it: slurmd, slurmstepd, agent,
#      workers): the same, ranks 2 and 3 now on node 2.
#   3. A worker of node 1 fails and the site's HealthCheck fails there: node 1
#      is taken out of the step and the spare takes its place.
#   4. The same in a batch job with --ddp-requeue, the HealthCheck saying 400
#      characters with a degree sign: node 1 is kept out of the requeued job
#      and the site's BadNodeHook hears of it, its reason cut and in ASCII.
#   5. A BadNodeHook that closes its output and sleeps: the step still ends
#      within 15 s (every run of the hook in a step has 10 s).
# srun returns once slurmctld declares the lost node DOWN (SlurmdTimeout); its
# exit code is 0 on Slurm 22.05, and 1 from 23.02 on, which marks any step
# that lost a node (src/api/step_launch.c); the run's verdict is the agents'.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
args=(--model mlp --data /usr/share/datasets/fashion-mnist --limit-train 16384 --limit-test 1000 --batch-size 64
  --epochs 12)
lost=$CLUSTER_NAME-n1
veth=sddp${CLUSTER_NAME}1

# The cluster's BadNodeHook (tests/integration/CMakeLists.txt): in a directory
# only root can write to, as the plugin requires; it says what it was told.
hook_dir=/run/ddp-test-$CLUSTER_NAME
rm -rf "$hook_dir" && mkdir -m 0700 "$hook_dir"
cat >"$hook_dir/hook" <<SH
#!/bin/sh
env | grep -E '^(SLURM_JOB_ID|DDP_)' | sort >"$hook_dir/said-\$SLURM_JOB_ID-\$DDP_BAD_NODE"
echo "reported \$DDP_BAD_NODE"
SH
chmod 755 "$hook_dir/hook"
# A hook that outlived its deadline (the bug part 5 looks for): its session.
end_sleepers() {
  local f
  for f in "$hook_dir"/sleeper-*.pid; do
    if [[ -e $f ]]; then kill -KILL -- "-$(cat "$f")" 2>/dev/null || true; fi
  done
}
finish() { end_sleepers; rm -rf "$hook_dir"; node_back 1 || true; cleanup_work; }
trap finish EXIT
# wait_then_stamp FILE PATTERN SECONDS: the time the pattern first showed up.
wait_then_stamp() { wait_lines "$1" "$2" 1 "$3"; now; }

# The options are checked before anything runs.
run srun -N3 --ddp=cpu --ddp-spares=1 true
expect_failure "--ddp-spares without --no-kill"
expect_in "$ERR" "--ddp-spares needs a step that outlives a lost node: add --no-kill (-k) to srun" "the fix is named"
run srun -N3 -k --ddp=cpu --ddp-spares=3 true
expect_failure "as many spares as nodes"
expect_in "$ERR" "--ddp-spares=3 leaves no node for the workers of this 3-node step; use at most 2" "says how many"
run srun -N3 -k --ntasks-per-node=2 --ddp=cpu --ddp-spares=1 true
expect_failure "spares in the task shape"
expect_in "$ERR" "--ddp-spares needs one task per node" "the task shape is refused"

# From a login host (neither a node nor the controller's host), Slurm 22.05.7
# and 22.05.8 would leave srun --no-kill waiting forever after a node loss:
# srun says so there, and only there, and only on those releases.
release=$(srun --version | awk '{print $NF}')
login_warning="this srun (Slurm $release) runs on a host that is neither a node nor the controller"
run "$DDP_SOURCE_DIR/tests/cluster/cluster.sh" login --name "$CLUSTER_NAME" srun -N2 -k --ddp=cpu --ddp-spares=1 true
expect_rc 0 "srun --ddp-spares from a login host"
if [[ $release == 22.05.[78] ]]; then
  expect_in "$ERR" "ddp: warning: --ddp-spares and --ddp-min-nodes need srun --no-kill, and $login_warning" \
    "the login host warned on $release"
  expect_in "$ERR" "Upgrade Slurm to 22.05.9 or later, run the srun inside an sbatch script, or declare this host" \
    "the ways out named"
else
  expect_not_in "$ERR" "$login_warning" "no warning on Slurm $release"
fi
run srun -N2 -k --ddp=cpu --ddp-spares=1 true
expect_not_in "$ERR" "neither a node nor the controller" "no warning on the controller's host"

# 1. ddp-train: the uninterrupted run on 2 nodes, then 3 nodes with a spare and a cut.
run srun -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --dump-params "$WORK/clean"
expect_rc 0 "uninterrupted run"
bg_srun cut -N3 -k --ddp=cpu --ddp-procs=2 --ddp-spares=1 --ddp-verbose "$train" "${args[@]}" \
  --snapshot-dir "$WORK/snaps" --dump-params "$WORK/resumed"
wait_lines "$WORK/cut.out" "epoch 3/12" 1 90
cut_at=$(now)
ip link set "$veth" down
resumed_at=$(wait_then_stamp "$WORK/cut.out" "resuming from $WORK/snaps/snapshot-" 60)
wait_exit "$BG_PID" 120
done_at=$(now)
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/cut.out") ERR=$(cat "$WORK/cut.err")
expect_rc "$(srun_rc_after_node_failure)" "srun after a node loss that the spare covered (Slurm $(slurm_version))"
expect_in "$ERR" "node 1 ($(hostname), " "the lost node is named"
expect_in "$ERR" "was lost: no heartbeat for 5 s (node down or network cut?) (attempt 0); spare node 2 " \
  "the cause names the loss, the attempt and the spare"
expect_in "$ERR" "takes over group 1 (2 worker(s)) from node 1" "the spare takes node 1's group"
expect_in "$ERR" "restarting every worker on every node (attempt 2 of 2)" "one restart"
expect_in "$ERR" "attempt 1: 2 node(s), 4 worker(s)" "the verbose plan again, same world"
expect_in "$ERR" "node 2 ($(hostname), $(node_addr "$CLUSTER_NAME-n2")): group 1, ranks 2-3" "ranks 2-3 on the spare"
expect_in "$ERR" "node 1 ($(hostname), $(node_addr "$lost")): lost, not used again" "node 1 is out"
expect_in "$ERR" "the run went on after: node 1" "node 0 says the run survived"
expect_in "$ERR" "Node failure on $lost" "srun heard of the failure from Slurm"
expect_in "$OUT" "done: 12 epochs on 4 rank(s)" "the training finished"
cmp -s "$WORK/clean" "$WORK/resumed" || fail "the run with a spare ended with other parameters than the uninterrupted one"
cut_resume=$(since "$cut_at" "$resumed_at") cut_srun=$(since "$cut_at" "$done_at")
node_back 1

# 2. PyTorch, node 1 crashed outright.
export RESUME_STEPS=40 RESUME_STEP_SECONDS=0.25 RESUME_CRASH=0
mkdir -p "$WORK/pt"
bg_srun crash -N3 -k --ddp=cpu --ddp-procs=2 --ddp-spares=1 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$WORK/pt"
wait_lines "$WORK/crash.out" "attempt=0 restart_count=0" 4 90
sleep 2
crash_at=$(now)
for pid in $(ip netns pids "sddp-$CLUSTER_NAME-n1"); do kill -KILL "$pid" 2>/dev/null || true; done
again_at=$(wait_then_stamp "$WORK/crash.out" "attempt=1 restart_count=1" 60)
wait_exit "$BG_PID" 120
crash_done=$(now)
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/crash.out") ERR=$(cat "$WORK/crash.err")
expect_rc "$(srun_rc_after_node_failure)" "srun after node 1 crashed (Slurm $(slurm_version))"
expect_in "$ERR" "was lost: its agent's connection ended" "the crash is noticed at once"
expect_in "$ERR" "spare node 2 ($(hostname), " "the spare takes over"
expect_eq "$(grep -c '^attempt=1 restart_count=1 resumed_from=[0-9]* .* world=4 ' <<<"$OUT")" "4" \
  "every worker restarted once, resumed from the snapshot, world size unchanged"
expect_eq "$(grep '^attempt=1 ' <<<"$OUT" | grep -c "node=$CLUSTER_NAME-n2")" "2" "two ranks on the spare"
expect_eq "$(grep '^attempt=1 ' <<<"$OUT" | grep -c "node=$lost")" "0" "none on the lost node"
expect_eq "$(grep -c '^final step=40 ' <<<"$OUT")" "4" "every rank finished"
crash_resume=$(since "$crash_at" "$again_at") crash_srun=$(since "$crash_at" "$crash_done")
node_back 1

# 3. The site's HealthCheck: rank 3 (node 1) crashes at step 5, and node 1's
# check fails (tests/integration/CMakeLists.txt: the node named in
# DDP_TEST_UNHEALTHY). Node 1 is taken out, the spare takes its group, and
# srun ends at once with 0: no node was lost to Slurm.
rm -rf "$WORK/pt" && mkdir -p "$WORK/pt"
run env RESUME_CRASH=1 RESUME_STEP_SECONDS=0 "DDP_TEST_UNHEALTHY=$lost" \
  srun -N3 -k --ddp=cpu --ddp-procs=2 --ddp-spares=1 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$WORK/pt"
expect_rc 0 "a run whose unhealthy node the spare replaced"
expect_in "$ERR" "node 1 ($(hostname)) is unhealthy: its HealthCheck " "node 1's agent says what its check found"
expect_in "$ERR" "is unhealthy, taken out of the step: its HealthCheck " "node 0 takes it out"
expect_in "$ERR" "failed: GPU 1: 3 uncorrectable ECC errors (test) (attempt 0); spare node 2 " "with the check's words"
expect_in "$ERR" "(its own failure before: worker rank 3 (local rank 1) on node 1" "and the failure before"
expect_eq "$(grep '^attempt=1 ' <<<"$OUT" | grep -c "node=$CLUSTER_NAME-n2")" "2" "two ranks on the spare"
expect_eq "$(grep -c '^final step=40 ' <<<"$OUT")" "4" "every rank finished"
expect_not_in "$ERR" "Node failure" "Slurm lost no node"

# 4. Node 1's HealthCheck says 400 characters with a degree sign, in a batch
# job with --ddp-requeue; Slurm's warning (USR1) then requeues the job. Node
# 0's slurmstepd, as the step ends, keeps node 1 out of the requeued job and
# runs the site's hook for it, its reason cut to 300 characters of ASCII.
cat >"$WORK/unhealthy.sh" <<'SH'
#!/bin/sh
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$SLURMD_NODENAME" = "$DDP_TEST_UNHEALTHY" ]; then exit 1; fi
trap 'exit 0' USR1
echo "rank $RANK running on $SLURMD_NODENAME"
sleep 60 &
wait
SH
chmod +x "$WORK/unhealthy.sh"
printf '#!/bin/bash\nsrun -k --ddp=cpu --ddp-spares=1 --ddp-requeue %q\n' "$WORK/unhealthy.sh" >"$WORK/requeue.sh"
says="GPU at 95 °C, $(printf 'x%.0s' {1..400})"
id=$(DDP_TEST_UNHEALTHY=$lost DDP_TEST_UNHEALTHY_SAYS=$says \
  sbatch --parsable -N3 -o "$WORK/requeue.out" -e "$WORK/requeue.err" "$WORK/requeue.sh") || fail "sbatch refused"
wait_lines "$WORK/requeue.out" "running on $CLUSTER_NAME-n2" 1 60
scancel --signal=USR1 "$id"
requeue_done() {
  info=$(scontrol show job "$id")
  [[ $info == *Restarts=1* && $info == *"ExcNodeList=$lost"* && $info != *JobHeldUser* ]]
}
deadline=$((SECONDS + 60))
until requeue_done || ((SECONDS > deadline)); do sleep 0.2; done
scancel "$id"
expect_in "$info" "Restarts=1" "node 0 requeued the job"
[[ $info == *"ExcNodeList=$lost"* ]] ||
  fail "the requeued job does not exclude the unhealthy node 1 (scontrol: $(grep -o 'ExcNodeList=[^ ]*' <<<"$info")); \
node 0's slurmd said: $(grep -e "\[$id\.0\] ddp:" "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log" | tail -5)"
deadline=$((SECONDS + 10))
until [[ -e $hook_dir/said-$id-$lost ]] || ((SECONDS > deadline)); do sleep 0.2; done
said=$(cat "$hook_dir/said-$id-$lost" 2>/dev/null) ||
  fail "the BadNodeHook was not run for the unhealthy $lost; node 0's slurmd said: \
$(grep -e "\[$id\.0\] ddp:" "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log" | tail -5)"
reasons=$(sed -n 's/^DDP_BAD_NODE_REASONS=//p' <<<"$said")
expect_in "$reasons" 'failed: GPU at 95 \xc2\xb0C, xxxxxxxxxx' "the hook hears the check's words, in ASCII"
expect_eq "${#reasons}" "300" "the reason's length, cut"
expect_eq "${reasons: -6}" " [...]" "the cut is marked"

# 5. A hook that closes its output, ignores SIGTERM and sleeps: slurmstepd
# runs it before it tells slurmctld the step is complete, so the step would
# wait for it. Killed at the step's 10 s: node 0's slurmstepd ends within 15 s
# of srun. (A forged line for node 0 is reason enough to run the hook.)
cat >"$hook_dir/hook.new" <<SH
#!/bin/sh
echo \$\$ >"$hook_dir/sleeper-\$SLURM_JOB_ID.pid"
exec >&- 2>&-
trap '' TERM
sleep 600
SH
chmod 755 "$hook_dir/hook.new" && mv "$hook_dir/hook.new" "$hook_dir/hook"
run srun -N2 --ddp=cpu /bin/sh -c 'if [ "$RANK" = 0 ]; then echo "job $SLURM_JOB_ID on $SLURMD_NODENAME"
  printf "node=%s reasons=forged\n" "$SLURMD_NODENAME" >"/run/slurm-ddp/$SLURM_JOB_ID.$SLURM_STEP_ID"; fi'
srun_at=$(now)
expect_rc 0 "a step whose report runs a hook that never ends"
read -r job node0 < <(sed -n 's/^job \([0-9]*\) on \(.*\)/\1 \2/p' <<<"$OUT")
deadline=$((SECONDS + 30))
while [[ -n $(node_processes "slurmstepd: \[$job\.0\]") ]] && ((SECONDS < deadline)); do sleep 0.2; done
stepd_took=$(since "$srun_at" "$(now)")
hook_log=$(grep -e "\[$job\.0\] ddp:" "$CLUSTER_DIR/log/slurmd-$node0.log" || true)
awk -v t="$stepd_took" 'BEGIN { exit !(t < 15) }' ||
  fail "node 0's slurmstepd of step $job.0 ended $stepd_took s after srun, expected within 15 s; slurmd said: $hook_log"
expect_in "$hook_log" "BadNodeHook $hook_dir/hook for $node0 (killed at the deadline)" \
  "slurmd's log says the hook was killed at the step's deadline"
sleeper=$(cat "$hook_dir/sleeper-$job.pid")
[[ ! -e /proc/$sleeper ]] || [[ $(awk '{print $3}' "/proc/$sleeper/stat") == Z ]] || fail "the hook outlived its deadline"
pass "spares: a cut node replaced, training again after ${cut_resume} s, srun back after ${cut_srun} s, the uninterrupted run's parameters; a crashed node replaced, PyTorch again after ${crash_resume} s, srun back after ${crash_srun} s; an unhealthy node replaced, kept out of the requeued job and reported with its 400-character reason cut; a hook \
that never ends killed: slurmstepd done ${stepd_took} s after srun (Slurm $(slurm_version))"
