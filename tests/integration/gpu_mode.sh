#!/usr/bin/env bash
# GPU mode on fake GPUs (char devices with NVIDIA's major number; nothing runs
# CUDA here): --ddp picks one worker per GPU of the step, --ddp-gpus fewer.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

script='echo "rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE cvd=$CUDA_VISIBLE_DEVICES"'
run srun -N2 --gpus-per-node=2 --ddp /bin/sh -c "$script"
expect_rc 0 "srun --gpus-per-node=2 --ddp"
expect_eq "$(grep -c '^rank=' <<<"$OUT")" "4" "auto mode: one worker per GPU"
expect_in "$OUT" "rank=3 local=1 world=4" "global ranks over GPU workers"

run srun -N2 --gpus-per-node=2 --ddp-gpus=1 /bin/sh -c "$script"
expect_rc 0 "srun --ddp-gpus=1"
expect_eq "$(grep -c '^rank=' <<<"$OUT")" "2" "--ddp-gpus=1: one worker per node"

run srun -N2 --gpus-per-node=1 --ddp-gpus=2 true
expect_failure "--ddp-gpus above the step's GPUs"
expect_in "$ERR" "--ddp-gpus=2 but the step has only 1 GPU(s)" "too few GPUs message"
# Different GPU counts per node (--gpus=3 over 2 nodes: 2 + 1): the agents
# exchange their counts at the rendezvous, ranks are a running sum.
run srun -N2 --gpus=3 --ddp /bin/sh -c "$script"
expect_rc 0 "srun --gpus=3 --ddp"
expect_eq "$(grep -c '^rank=' <<<"$OUT")" "3" "3 GPU workers on 2 nodes"
expect_eq "$(grep -o 'world=[0-9]*' <<<"$OUT" | sort -u)" "world=3" "WORLD_SIZE counts every node's GPUs"
expect_eq "$(grep -o '^rank=[0-9]*' <<<"$OUT" | sort | tr '\n' ' ')" "rank=0 rank=1 rank=2 " "ranks 0..2, each once"

# With SDDP_NCCL_PROFILER=1 (opt-in until it has run on a GPU), GPU workers
# get our NCCL profiler plugin (the straggler watch's GPU figures) and their
# own collective-time file, empty until NCCL writes to it; a job's own
# NCCL_PROFILER_PLUGIN is kept, and said; --ddp-stragglers=off, or no
# opt-in: none.
nccl='echo "plugin=$NCCL_PROFILER_PLUGIN stats=$DDP_NCCL_STATS_FILE"; [ -f "$NCCL_PROFILER_PLUGIN" ] && [ -f "$DDP_NCCL_STATS_FILE" ] && [ -w "$DDP_NCCL_STATS_FILE" ] && [ ! -s "$DDP_NCCL_STATS_FILE" ]'
run srun -N1 --gpus-per-node=1 --ddp /bin/sh -c 'echo "plugin=${NCCL_PROFILER_PLUGIN:-none}"'
expect_eq "$(grep -c '^plugin=none$' <<<"$OUT")" "1" "no plugin without the opt-in"
export SDDP_NCCL_PROFILER=1
run srun -N2 --gpus-per-node=1 --ddp /bin/sh -c "$nccl"
expect_rc 0 "every GPU worker has the plugin and its own empty, writable file"
expect_eq "$(grep -c 'plugin=/.*/libnccl-profiler-ddp.so stats=/.*/rank_[01]/nccl$' <<<"$OUT")" "2" "NCCL_PROFILER_PLUGIN and DDP_NCCL_STATS_FILE"
NCCL_PROFILER_PLUGIN=/opt/theirs.so run srun -N2 --gpus-per-node=1 --ddp /bin/sh -c 'echo "plugin=$NCCL_PROFILER_PLUGIN stats=${DDP_NCCL_STATS_FILE:-none}"'
expect_rc 0 "a job's own NCCL profiler plugin"
expect_eq "$(grep -c '^plugin=/opt/theirs.so stats=none$' <<<"$OUT")" "2" "the job's plugin kept"
expect_in "$ERR" "NCCL_PROFILER_PLUGIN=/opt/theirs.so is the job's own: NCCL loads that one" "and said"
run srun -N1 --gpus-per-node=1 --ddp --ddp-stragglers=off /bin/sh -c 'echo "plugin=${NCCL_PROFILER_PLUGIN:-none}"'
expect_eq "$(grep -c '^plugin=none$' <<<"$OUT")" "1" "--ddp-stragglers=off: no plugin"
unset SDDP_NCCL_PROFILER
pass "GPU worker counts follow the step's GPUs; GPU workers get the NCCL profiler plugin and their collective-time file"
