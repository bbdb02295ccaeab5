#!/usr/bin/env bash
# The batch script (node 0 only) gets MASTER_ADDR, MASTER_PORT, DDP_NNODES and
# DDP_NPROC_PER_NODE, so a script that still launches torchrun by hand works.
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
# torchrun by hand (Debian's 1.13 on Python 3.11 needs --redirects/--tee and
# underscore flags); --no-ddp keeps the agent out of this step. On the test
# cluster the nodes share a hostname, so Gloo needs the interface named.
srun --no-ddp --ntasks-per-node=1 --export=ALL,GLOO_SOCKET_IFNAME=eth0 bash -c \
  'exec torchrun --nnodes=$DDP_NNODES --nproc_per_node=$DDP_NPROC_PER_NODE --node_rank=$SLURM_NODEID \
     --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT --redirects 9:0 --tee 9:0 \
     $DDP_SOURCE_DIR/examples/allreduce.py'
JOB
sbatch_wait -N2 --ddp=cpu --ddp-procs=2 -o "$work/out" -e "$work/err" "$work/job.sh"
OUT=$(sed "s/^\\[rank [0-9]*\\] //" "$work/out" 2>/dev/null || true) ERR=$(cat "$work/err" 2>/dev/null || true)
expect_rc 0 "sbatch job with torchrun by hand"
line=$(grep '^batch:' <<<"$OUT") || { show batch; fail "no batch line"; }
expect_in "$line" "addr=$addr0 port=2" "MASTER_ADDR is node 0's NodeAddr, port in the default range"
expect_in "$line" "nnodes=2 nproc=2 rank=none" "node count, workers per node, no worker contract in the batch script"
expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "torchrun by hand ran 4 ranks with the exported values"
pass "batch script exports work for torchrun by hand"
