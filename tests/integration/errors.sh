#!/usr/bin/env bash
# Bad input gets one clear message naming the problem and the fix, fast.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

run srun -N2 --ddp=bogus true
expect_rc 255 "srun --ddp=bogus"  # srun refuses before allocating
expect_in "$ERR" "ddp: --ddp=bogus is not a mode; use --ddp, --ddp=auto, --ddp=gpu or --ddp=cpu" "bad mode"

run srun -N2 --ddp-procs=0 true
expect_in "$ERR" "ddp: --ddp-procs=0 is out of range" "zero workers"

run srun -N2 --ddp=cpu --ddp-gpus=2 true
expect_in "$ERR" "ddp: --ddp-gpus asks for GPU workers but --ddp=cpu" "contradicting options"

run srun -N2 --ddp=gpu true
expect_failure "--ddp=gpu without GPUs"
expect_in "$ERR" "ddp: GPU mode, but the step has no GPUs on node $CLUSTER_NAME-n0; request them" "no GPUs"
expect_eq "$(grep -c "no GPUs on node $CLUSTER_NAME-n0" <<<"$ERR")" "1" "one message per node, not per task"

for bad in 0 -1 abc; do
  run srun -N1 --ddp-gpus=$bad true
  expect_rc 255 "--ddp-gpus=$bad"
  expect_in "$ERR" "ddp: --ddp-gpus" "--ddp-gpus=$bad names the option"
done
run srun -N1 --gpus-per-node=1 --ddp=gpu --ddp-procs=2 true
expect_in "$ERR" "ddp: --ddp-procs sets CPU workers but --ddp=gpu asks for GPU workers" "--ddp-procs with --ddp=gpu"
run srun -N1 --ddp=cpu --ddp-port=80 true
expect_in "$ERR" "ddp: --ddp-port=80 is out of range; use a number between 1024 and 65535" "privileged port"

# A second launcher in the agent shape would start workers x workers.
run srun -N2 --ddp=cpu torchrun --nproc_per_node=2 x.py
expect_failure "srun --ddp torchrun"
expect_in "$ERR" "ddp: the step's command is torchrun, a launcher" "double launch refused"
expect_eq "$(grep -c "a launcher" <<<"$ERR")" "1" "reported once, not per node"
run env LOCAL_RANK=0 srun -N1 --ddp=cpu true
expect_in "$ERR" "ddp: LOCAL_RANK is already set" "LOCAL_RANK already set"

# MASTER_PORT taken on node 0 by a process that is not a slurm-ddp step: the
# user's own --ddp-port is never moved, so said before any worker starts,
# naming the holder.
port=24999
"$DDP_SOURCE_DIR/tests/cluster/cluster.sh" node --name "$CLUSTER_NAME" 0 \
  "$PYTHON" -c "import socket,time; s=socket.socket(); s.bind(('$(node_addr "$CLUSTER_NAME-n0")', $port)); s.listen(); time.sleep(20)" &
holder=$!
trap 'kill $holder 2>/dev/null || true' EXIT
sleep 1
run srun -N2 --ddp=cpu --ddp-port=$port true
expect_failure "--ddp-port in use"
expect_in "$ERR" "root cause: MASTER_PORT $port (--ddp-port) is in use on node 0 by a process that is not a slurm-ddp step (pid $holder, user root (uid 0), listening)" "port in use message, naming its pid"
kill $holder 2>/dev/null || true

# A failing worker: srun's exit code is the worker's, and the root cause names
# it. The agent stops the other worker on its node at once; the other node's
# workers sleep only briefly here (fail_fast.sh tests that they are stopped).
run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" -c 'import os, sys, time; r = int(os.environ["RANK"]); sys.exit(3) if r == 2 else time.sleep(3)'
expect_rc 3 "worker rank 2 exits 3"
expect_in "$ERR" "root cause: worker rank 2 (local rank 0) on node 1" "root cause names the rank"

# A heterogeneous step is refused at once (not at the rendezvous timeout);
# one component's step inside a heterogeneous job still works.
run srun -N1 --ddp=cpu true : -N1 true
expect_failure "heterogeneous step"
expect_in "$ERR" "ddp: --ddp cannot run a heterogeneous step (srun ... : ...)" "heterogeneous step refused with the fix"
printf '#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N1\nsrun --het-group=1 --ddp=cpu sh -c %s\n' \
  "'echo \"het-group rank=\$RANK of \$WORLD_SIZE\"'" >"$WORK/het.sh"
run sbatch --wait -o "$WORK/het.out" "$WORK/het.sh"
expect_rc 0 "srun --het-group=1 --ddp inside a heterogeneous job"
expect_in "$(cat "$WORK/het.out")" "het-group rank=0 of 1" "one component's step runs with --ddp"

# A command that does not exist.
run srun -N1 --ddp=cpu no-such-command-ddp
expect_rc 127 "missing command"
expect_in "$ERR" "cannot execute no-such-command-ddp" "missing command message"
pass "bad options, missing GPUs and failing workers give clear messages"
