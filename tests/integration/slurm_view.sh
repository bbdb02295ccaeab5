#!/usr/bin/env bash
# The agent shape gives every worker Slurm's task variables as if srun had
# started one task per worker: 2 nodes x 3 workers, with --mpi=pmi2 so that
# Slurm sets PMI variables for the node's one task. A probe reproduces
# submitit's and Lightning's SLURMEnvironment rank logic: every worker must
# see the ranks torchrun's variables give it, and no PMI variable. With
# SDDP_KEEP_TASK_ENV=1 the node's task variables stay as Slurm set them.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
probe="$PYTHON $DDP_SOURCE_DIR/tests/integration/slurm_view_probe.py"

run srun -N2 --mpi=pmi2 --ddp=cpu --ddp-procs=3 $probe
expect_rc 0 "srun --ddp with the probe"
expect_eq "$(grep -c '^probe ' <<<"$OUT")" "6" "six workers answered"
for rank in 0 1 2 3 4 5; do
  local_rank=$((rank % 3)) node=$((rank / 3))
  line=$(grep "^probe torchrun=$rank,$local_rank,6,2,$node " <<<"$OUT") || fail "no worker with RANK=$rank LOCAL_RANK=$local_rank on node $node"
  expect_in "$line" "submitit=$rank,$local_rank,6,2,$node " "rank $rank: submitit's JobEnvironment sees the worker's ranks"
  expect_in "$line" "lightning=$rank,$local_rank,$node,6 lightning_ok=True " "rank $rank: Lightning's SLURMEnvironment sees the worker's ranks"
  expect_in "$line" "tasks_per_node=3(x2) gtids=$((node * 3)),$((node * 3 + 1)),$((node * 3 + 2)) " "rank $rank: tasks per node and this node's ranks"
  expect_in "$line" "pmi=none" "rank $rank: no PMI variable of the node's task"
done

run env SDDP_KEEP_TASK_ENV=1 srun -N2 --mpi=pmi2 --ddp=cpu --ddp-procs=3 $probe
expect_rc 0 "srun --ddp with SDDP_KEEP_TASK_ENV=1"
expect_eq "$(grep -c '^probe torchrun=[0-2],[0-2],6,2,0 submitit=0,0,2,2,0 ' <<<"$OUT")" "3" \
  "SDDP_KEEP_TASK_ENV=1: node 0's workers keep the node's task variables"
expect_in "$OUT" "PMI_RANK" "SDDP_KEEP_TASK_ENV=1: the PMI variables stay"
pass "every worker's Slurm variables agree with its torchrun ranks (submitit, Lightning); no PMI variables; SDDP_KEEP_TASK_ENV=1 keeps Slurm's"
