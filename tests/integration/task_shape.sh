#!/usr/bin/env bash
# The task shape: several Slurm tasks per node, each task one worker, no agent.
# Ranks follow Slurm's tasks per node, also when nodes differ.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
addr0=$(node_addr "$CLUSTER_NAME-n0")

run srun -N2 --ntasks-per-node=2 --ddp=cpu "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py"
expect_rc 0 "srun --ntasks-per-node=2 --ddp=cpu"
expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "4 task-workers all-reduced"
for r in 0 1 2 3; do
  expect_in "$OUT" "rank=$r local_rank=$((r % 2)) world=4 local_world=2 group_rank=$((r / 2)) master=$addr0:" "rank $r"
done

# Heterogeneous: 3 tasks on 2 nodes -> 2 + 1 workers, ranks contiguous per node.
run srun -N2 -n3 --ddp=cpu "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py"
expect_rc 0 "srun -n3 -N2 --ddp=cpu"
expect_eq "$(grep -c 'sum=6 expected=6 OK$' <<<"$OUT")" "3" "3 task-workers all-reduced"
expect_in "$OUT" "rank=2 local_rank=0 world=3 local_world=1 group_rank=1" "rank 2 alone on node 1"
expect_in "$OUT" "rank=1 local_rank=1 world=3 local_world=2 group_rank=0" "rank 1 second on node 0"

# GPU task shape on fake GPUs: one GPU per task, cuda:LOCAL_RANK is its own.
script='echo "rank=$RANK local=$LOCAL_RANK cvd=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER"'
run srun -N2 --ntasks-per-node=2 --gpus-per-node=2 --ddp /bin/sh -c "$script"
expect_rc 0 "GPU task shape"
expect_eq "$(grep -c 'order=PCI_BUS_ID' <<<"$OUT")" "4" "4 GPU task-workers"
expect_in "$OUT" "rank=3 local=1 cvd=0,1" "cuda:LOCAL_RANK indexes the step's GPUs"

run srun -N1 --ntasks-per-node=3 --gpus-per-node=2 --ddp true
expect_failure "more task-workers than GPUs"
expect_in "$ERR" "ddp: more workers than GPUs: 3 tasks on node $CLUSTER_NAME-n0 but only 2 GPU(s)" "too many tasks"
expect_eq "$(grep -c 'more workers than GPUs' <<<"$ERR")" "1" "the error is reported once"
# One GPU per task (--gpus-per-task, --gpu-bind): Slurm narrows each task's
# CUDA_VISIBLE_DEVICES to its own GPU, cuda:LOCAL_RANK is gone for LOCAL_RANK 1:
# refused with the fix, unless the script uses cuda:0 (SDDP_ONE_GPU_PER_WORKER=1).
run srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --ddp /bin/sh -c "$script"
expect_failure "--gpus-per-task=1 in the task shape"
expect_in "$ERR" "ddp: each task sees only its own GPU" "the refusal says why"
expect_in "$ERR" "--gpus-per-node=2" "the refusal gives the fix"
expect_not_in "$OUT" "rank=" "no worker ran"
run srun -N1 --ntasks-per-node=2 --gpus-per-node=2 --gpu-bind=single:1 --ddp /bin/sh -c "$script"
expect_failure "--gpu-bind=single:1 in the task shape"
expect_in "$ERR" "ddp: each task sees only its own GPU" "--gpu-bind narrows too"
run env SDDP_ONE_GPU_PER_WORKER=1 srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --ddp /bin/sh -c "$script"
expect_rc 0 "--gpus-per-task=1 with SDDP_ONE_GPU_PER_WORKER=1"
expect_eq "$(grep -c 'rank=[0-3] local=[01] cvd=[01] ' <<<"$OUT")" "4" "each task-worker sees its one GPU"
# The options only the agent implements: refused once, with the fix, before
# any worker runs (accepted, they would do nothing).
marker="$WORK/ran"
for option in --ddp-restarts=2 --ddp-hang-timeout=30 "--ddp-requeue"; do
  name=${option%%=*}
  if [[ $name == --ddp-requeue ]]; then
    # Batch jobs only: inside one, so that srun's own check lets it through.
    printf '#!/bin/bash\nsrun -N2 --ntasks-per-node=2 --ddp=cpu --ddp-requeue touch %s\n' "$marker" >"$WORK/rq.sh"
    sbatch_wait -N2 --ntasks-per-node=2 -o "$WORK/rq.out" "$WORK/rq.sh"
    ERR=$(cat "$WORK/rq.out")
  else
    run srun -N2 --ntasks-per-node=2 --ddp=cpu "$option" touch "$marker"
    expect_failure "$option in the task shape"
  fi
  expect_in "$ERR" "ddp: $name needs one task per node" "$option: the refusal says why"
  expect_in "$ERR" "drop --ntasks-per-node" "$option: the refusal gives the fix"
  expect_eq "$(grep -c -- "$name needs one task per node" <<<"$ERR")" "1" "$option: said once"
  [[ ! -e $marker ]] || fail "$option in the task shape: a worker ran"
done
# Two task-shape steps on the same --ddp-port: node 0's slurmstepd holds the
# first one's claim for the step's life, so the second is refused at once,
# naming the holder (not left to start and fail when its rank 0 cannot bind).
# Once the first has ended, the port is free again.
bg_srun holder -N2 --ntasks-per-node=2 --ddp=cpu --ddp-port=24888 /bin/sh -c 'echo holding; sleep 6'
wait_lines "$WORK/holder.out" "holding" 4 30
run srun -N2 --ntasks-per-node=2 --ddp=cpu --ddp-port=24888 /bin/sh -c "touch $WORK/second-ran.\$RANK"
expect_failure "a second step on a --ddp-port the first holds"
expect_in "$ERR" "MASTER_PORT 24888 (--ddp-port) is in use on node 0 by another slurm-ddp step (pid " \
  "the holder is named"
[[ ! -e $WORK/second-ran.0 && ! -e $WORK/second-ran.1 ]] || fail "the second step's workers on node 0 ran"
wait_exit "$BG_PID" 30
expect_rc 0 "the first step"
run srun -N2 --ntasks-per-node=2 --ddp=cpu --ddp-port=24888 true
expect_rc 0 "the port once the first step has ended"
pass "task shape: ranks per Slurm task, heterogeneous nodes, GPU checks, one GPU per task refused with the fix; --ddp-restarts, --ddp-hang-timeout, --ddp-requeue refused once with the fix; a --ddp-port another step holds refused naming it"
