#!/usr/bin/env bash
# The batch script (node 0 only) gets MASTER_ADDR, MASTER_PORT, DDP_NNODES and
# DDP_NPROC_PER_NODE, so a script that still launches torchrun by hand works
# (or, where the distribution's torchrun cannot run, one task per rank).
# The agent is never exec'd for the batch script itself.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
addr0=$(node_addr "$CLUSTER_NAME-n0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Quoted here-document: the job expands these itself, with the batch step's
# environment (DDP_SOURCE_DIR reaches it through sbatch's default --export=ALL).
cat >"$work/job.sh" <<'JOB'
#!/bin/bash
echo "batch: addr=$MASTER_ADDR port=$MASTER_PORT nnodes=$DDP_NNODES nproc=$DDP_NPROC_PER_NODE rank=${RANK:-none}"
# --no-ddp keeps the agent out of these steps. On the test cluster the nodes
# share a hostname, so Gloo needs the interface named.
if [[ $TORCHRUN_WORKS == 1 ]]; then
  # torchrun by hand (Debian's 1.13 on Python 3.11 needs --redirects/--tee and
  # underscore flags).
  srun --no-ddp --ntasks-per-node=1 --export=ALL,GLOO_SOCKET_IFNAME=eth0 bash -c \
    'exec torchrun --nnodes=$DDP_NNODES --nproc_per_node=$DDP_NPROC_PER_NODE --node_rank=$SLURM_NODEID \
       --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT --redirects 9:0 --tee 9:0 \
       $DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py'
else
  # One task per rank, the torchrun variables from Slurm's, by hand
  # (--overcommit: the job holds one CPU per node).
  srun --no-ddp --overcommit --ntasks-per-node="$DDP_NPROC_PER_NODE" --export=ALL,GLOO_SOCKET_IFNAME=eth0 bash -c \
    'RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS \
     LOCAL_WORLD_SIZE=$DDP_NPROC_PER_NODE GROUP_RANK=$SLURM_NODEID \
     exec python3 $DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py'
fi
JOB
# Debian builds PyTorch 2.x without libuv, and its torchrun then cannot start
# its own store at all ("use_libuv was requested but PyTorch was build
# without libuv support", whatever USE_LIBUV says): there the batch script
# launches one task per rank itself, the other way scripts launch by hand.
TORCHRUN_WORKS=1
if ! "$PYTHON" -c 'import torch.distributed as d; d.TCPStore("127.0.0.1", 0, 1, True, multi_tenant=True)' 2>/dev/null; then
  TORCHRUN_WORKS=0
fi
export TORCHRUN_WORKS
sbatch_wait -N2 --ddp=cpu --ddp-procs=2 -o "$work/out" -e "$work/err" "$work/job.sh"
OUT=$(sed "s/^\\[rank [0-9]*\\] //" "$work/out" 2>/dev/null || true) ERR=$(cat "$work/err" 2>/dev/null || true)
expect_rc 0 "sbatch job with a hand-written launch (torchrun: $TORCHRUN_WORKS)"
line=$(grep '^batch:' <<<"$OUT") || { show batch; fail "no batch line"; }
expect_in "$line" "addr=$addr0 port=2" "MASTER_ADDR is node 0's NodeAddr, port in the default range"
expect_in "$line" "nnodes=2 nproc=2 rank=none" "node count, workers per node, no worker contract in the batch script"
expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "the hand-written launch ran 4 ranks with the exported values"
pass "batch script exports work for a launch by hand (torchrun: $TORCHRUN_WORKS)"
