#!/usr/bin/env bash
# conf/cli_filter.lua, the optional site script, on a cluster started with
# `cluster.sh up --cli-filter conf/cli_filter.lua --gpus 2`: --ddp-gpus=N alone
# (sbatch, #SBATCH, srun, or --ddp with SDDP_GPUS) requests N GPUs and one task
# per node; an explicit GPU request is kept when big enough and refused with a
# "ddp:" message when too small; a job without --ddp-gpus is left alone, and a
# job without --ddp whatever its environment.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

[[ -f $CLUSTER_DIR/cli_filter.lua ]] && grep -qx 'CliFilterPlugins=cli_filter/lua' "$SLURM_CONF" ||
  fail "cluster '$CLUSTER_NAME' was not started with --cli-filter (no cli_filter.lua or CliFilterPlugins in $CLUSTER_DIR)"

# sbatch -N2 --ddp-gpus=2 with no GPU option: the job gets 2 GPUs and 1 task
# per node, and its --ddp step runs 2 GPU workers per node.
cat >"$WORK/job.sh" <<'JOB'
#!/bin/bash
scontrol show job "$SLURM_JOB_ID" | grep -oE 'NumTasks=[0-9]+|NtasksPerN:B:S:C=[0-9]+|TresPerNode=[^ ]+'
echo "batch gpus=$SLURM_GPUS_ON_NODE tasks=$SLURM_TASKS_PER_NODE"
srun --ddp bash -c 'echo "worker node=$SLURM_NODEID rank=$RANK world=$WORLD_SIZE cvd=$CUDA_VISIBLE_DEVICES"'
JOB
chmod +x "$WORK/job.sh"
sbatch_wait -N2 --ddp-gpus=2 -o "$WORK/out" -e "$WORK/err" "$WORK/job.sh"
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/out" 2>/dev/null || true) ERR=$(cat "$WORK/err" 2>/dev/null || true)
expect_rc 0 "sbatch -N2 --ddp-gpus=2"
# scontrol writes gres:gpu:N (22.05) or gres/gpu:N (24.11).
expect_in "$(sed 's#gres/gpu#gres:gpu#' <<<"$OUT")" "TresPerNode=gres:gpu:2" "sbatch --ddp-gpus=2 requested 2 GPUs per node"
expect_in "$OUT" "NtasksPerN:B:S:C=1" "sbatch --ddp-gpus=2 requested one task per node"
expect_in "$OUT" "NumTasks=2" "sbatch -N2 --ddp-gpus=2: 2 tasks"
expect_in "$OUT" "batch gpus=2 tasks=1(x2)" "the batch script sees 2 GPUs, 1 task on each node"
expect_eq "$(grep -c '^worker ' <<<"$OUT")" "4" "2 nodes x 2 GPU workers"
expect_eq "$(grep '^worker ' <<<"$OUT" | grep -c 'world=4 cvd=0,1$')" "4" "every worker sees both GPUs of its node"

# The same from an #SBATCH line.
printf '#!/bin/bash\n#SBATCH -N2\n#SBATCH --ddp-gpus=1\n' >"$WORK/job2.sh"
sed 1d "$WORK/job.sh" >>"$WORK/job2.sh"
sbatch_wait -o "$WORK/out2" -e "$WORK/err2" "$WORK/job2.sh"
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/out2" 2>/dev/null || true) ERR=$(cat "$WORK/err2" 2>/dev/null || true)
expect_rc 0 "#SBATCH --ddp-gpus=1"
expect_in "$(sed 's#gres/gpu#gres:gpu#' <<<"$OUT")" "TresPerNode=gres:gpu:1" "#SBATCH --ddp-gpus=1 requested 1 GPU per node"
expect_eq "$(grep '^worker ' <<<"$OUT" | grep -c 'world=2 cvd=0$')" "2" "#SBATCH --ddp-gpus=1: one worker per node on its GPU"

# srun that makes its own allocation.
node_script='echo "node=$SLURM_NODEID tasks=$SLURM_TASKS_PER_NODE gpus=[$SLURM_GPUS_ON_NODE] cvd=[$CUDA_VISIBLE_DEVICES] rank=$RANK"'
run srun -N2 --ddp-gpus=1 bash -c "$node_script"
expect_rc 0 "srun -N2 --ddp-gpus=1"
expect_eq "$(grep -c '^node=' <<<"$OUT")" "2" "srun -N2 --ddp-gpus=1: one worker per node"
expect_in "$OUT" "node=0 tasks=1(x2) gpus=[1] cvd=[0]" "srun --ddp-gpus=1: node 0 has 1 GPU, 1 task"
expect_in "$OUT" "node=1 tasks=1(x2) gpus=[1] cvd=[0]" "srun --ddp-gpus=1: node 1 has 1 GPU, 1 task"

run env SDDP_GPUS=2 srun -N2 --ddp bash -c "$node_script"
expect_rc 0 "SDDP_GPUS=2 srun -N2 --ddp"
# One task (the agent) per node and 2 GPUs each; every worker sees Slurm's
# task counts as if it were a task itself: 2 per node.
expect_eq "$(grep -c 'tasks=2(x2) gpus=\[2\] cvd=\[0,1\]' <<<"$OUT")" "4" "SDDP_GPUS=2 --ddp requests 2 GPUs per node too"
run env SDDP_GPUS=2 SDDP_MODE=off srun -N2 --ddp bash -c "$node_script"
expect_rc 0 "SDDP_GPUS=2 SDDP_MODE=off srun -N2 --ddp"
expect_eq "$(grep -c 'gpus=\[\] cvd=\[\] rank=$' <<<"$OUT")" "2" "SDDP_MODE=off: the filter leaves the job alone"
# Without --ddp the variables, old names or new, do nothing.
for case in SDDP_GPUS=2 DDP_GPUS=2; do
  run env "$case" srun -N2 bash -c "$node_script"
  expect_rc 0 "$case srun -N2 (no --ddp)"
  expect_eq "$(grep -c 'tasks=1(x2) gpus=\[\] cvd=\[\] rank=$' <<<"$OUT")" "2" "$case without --ddp: no GPUs, no DDP"
done

# An explicit GPU request that is big enough is kept as it is.
run srun -N2 --gpus-per-node=2 --ddp-gpus=1 bash -c "$node_script"
expect_rc 0 "srun --gpus-per-node=2 --ddp-gpus=1"
expect_eq "$(grep -c 'gpus=\[2\] cvd=\[0,1\]' <<<"$OUT")" "2" "--gpus-per-node=2 kept with --ddp-gpus=1"

# Too small: refused before anything is submitted, naming both values and the fix.
run sbatch -N2 --gpus-per-node=1 --ddp-gpus=2 "$WORK/job.sh"
expect_failure "sbatch --gpus-per-node=1 --ddp-gpus=2"
expect_in "$ERR" "ddp: --ddp-gpus=2 asks for 2 GPU workers per node but --gpus-per-node=1 gives each node only 1 GPU(s)" \
  "the refusal names both values"
expect_in "$ERR" "use --gpus-per-node=2" "the refusal names the fix"
expect_not_in "$OUT" "Submitted batch job" "nothing was submitted"
run srun -N2 --gpus-per-node=1 --ddp-gpus=2 true
expect_failure "srun --gpus-per-node=1 --ddp-gpus=2"
expect_in "$ERR" "ddp: --ddp-gpus=2 asks for 2 GPU workers per node but --gpus-per-node=1" "srun: the same refusal"
run srun -N2 --gres=gpu:1 --ddp-gpus=2 true
expect_failure "srun --gres=gpu:1 --ddp-gpus=2"
expect_in "$ERR" "ddp: --ddp-gpus=2 asks for 2 GPU workers per node but --gres=gpu:1" "--gres=gpu:1 is refused too"

# No --ddp-gpus: untouched, no GPUs (also with --ddp, and with --no-ddp).
run srun -N2 bash -c "$node_script"
expect_rc 0 "srun -N2 without --ddp-gpus"
expect_eq "$(grep -c 'gpus=\[\] cvd=\[\]' <<<"$OUT")" "2" "a job without --ddp-gpus gets no GPUs"
run srun -N2 --ddp=cpu bash -c "$node_script"
expect_rc 0 "srun -N2 --ddp=cpu"
expect_eq "$(grep -c 'gpus=\[\] cvd=\[\]' <<<"$OUT")" "2" "--ddp=cpu gets no GPUs"
run srun -N2 --no-ddp --ddp-gpus=2 bash -c "$node_script"
expect_rc 0 "srun --no-ddp --ddp-gpus=2"
expect_eq "$(grep -c 'gpus=\[\] cvd=\[\]' <<<"$OUT")" "2" "--no-ddp: the filter leaves the job alone"
run sbatch --parsable -N2 -o /dev/null --wrap true
expect_rc 0 "sbatch -N2 --wrap true"
job=$OUT
info=$(scontrol show job "$job")
expect_not_in "$info" "TresPerNode" "sbatch without --ddp-gpus requests no GPUs"
expect_in "$info" "NtasksPerN:B:S:C=0:" "sbatch without --ddp-gpus: no --ntasks-per-node added"
pass "cli_filter.lua: --ddp-gpus=N requests N GPUs and one task per node; too few GPUs refused; other jobs untouched"
