#!/usr/bin/env bash
# An elastic minimum (--ddp-min-nodes) without spares, on real daemons: a
# 2-node PyTorch run (tests/integration/fixtures/resume.py) loses node 1's network; it goes on
# from the newest snapshot on node 0 alone, WORLD_SIZE halved, every worker
# told the new size and the restart count. A minimum above the nodes that run
# workers is refused before anything starts.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
veth=sddp${CLUSTER_NAME}1
finish() { node_back 1 || true; cleanup_work; }
trap finish EXIT

run srun -N3 -k --ddp=cpu --ddp-spares=1 --ddp-min-nodes=3 true
expect_failure "a minimum above the nodes that run workers"
expect_in "$ERR" "--ddp-min-nodes=3 is more than the 2 node(s) that run workers (3 in the step, 1 of them spares)" \
  "the limit is explained"
run srun -N2 --ddp=cpu --ddp-min-nodes=1 true
expect_failure "--ddp-min-nodes without --no-kill"
expect_in "$ERR" "--ddp-min-nodes needs a step that outlives a lost node: add --no-kill (-k)" "the fix is named"

# sbatch cannot see every way a job becomes no-kill (a cli_filter): it warns.
run sbatch -N2 --ddp=cpu --ddp-min-nodes=1 -o /dev/null --wrap true
expect_rc 0 "sbatch --ddp-min-nodes without --no-kill submits"
expect_in "$ERR" "ddp: warning: the job was not submitted with --no-kill: --ddp-min-nodes needs" "and warns"
printf '#!/bin/bash\n#SBATCH -N2 --no-kill\ntrue\n' >"$WORK/job.sh"
run sbatch --ddp=cpu --ddp-min-nodes=1 -o /dev/null "$WORK/job.sh"
expect_rc 0 "sbatch with #SBATCH --no-kill"
expect_not_in "$ERR" "warning" "an #SBATCH --no-kill line counts"
run sbatch -k -N2 --ddp=cpu --ddp-min-nodes=1 -o /dev/null --wrap true
expect_not_in "$ERR" "warning" "sbatch -k counts"

export RESUME_STEPS=40 RESUME_STEP_SECONDS=0.25 RESUME_CRASH=0
mkdir -p "$WORK/pt"
bg_srun shrink -N2 -k --ddp=cpu --ddp-procs=2 --ddp-min-nodes=1 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$WORK/pt"
wait_lines "$WORK/shrink.out" "attempt=0 restart_count=0" 4 90
sleep 2
cut_at=$(now)
ip link set "$veth" down
wait_lines "$WORK/shrink.out" "attempt=1 restart_count=1" 1 60
again_at=$(now)
wait_exit "$BG_PID" 120
done_at=$(now)
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/shrink.out") ERR=$(cat "$WORK/shrink.err")
expect_rc "$(srun_rc_after_node_failure)" "srun after the loss (Slurm $(slurm_version))"
expect_in "$ERR" "no spare node left: going on with 1 node(s), 2 worker(s) (--ddp-min-nodes=1)" "the shrink is said"
expect_eq "$(grep -c '^attempt=1 restart_count=1 resumed_from=[0-9]* .* world=2 ' <<<"$OUT")" "2" \
  "two workers restarted with WORLD_SIZE 2, from the snapshot"
expect_eq "$(grep '^attempt=1 ' <<<"$OUT" | grep -c "node=$CLUSTER_NAME-n0")" "2" "both on node 0"
expect_eq "$(grep -c '^final step=40 ' <<<"$OUT")" "2" "both finished"
node_back 1
pass "--ddp-min-nodes: the step went on with one node fewer, WORLD_SIZE halved, training again after $(since "$cut_at" "$again_at") s, srun back after $(since "$cut_at" "$done_at") s (Slurm $(slurm_version))"
