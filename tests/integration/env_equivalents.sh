#!/usr/bin/env bash
# DDP_* environment variables stand in for the options (slurmrestd cannot pass
# SPANK options); an option on the command line wins.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

run env DDP_MODE=cpu DDP_PROCS=2 srun -N2 "$PYTHON" "$DDP_SOURCE_DIR/examples/allreduce.py"
expect_rc 0 "DDP_MODE=cpu DDP_PROCS=2 srun"
expect_eq "$(grep -c 'world=4 .*OK$' <<<"$OUT")" "4" "the environment enabled DDP with 2 workers per node"

run env DDP_MODE=cpu DDP_PROCS=3 srun -N2 --ddp-procs=1 /bin/sh -c 'echo "world=$WORLD_SIZE"'
expect_eq "$(sort -u <<<"$OUT")" "world=2" "--ddp-procs=1 wins over DDP_PROCS=3"

run env DDP_MODE=off srun -N1 --ddp=cpu /bin/sh -c 'echo "rank=${RANK:-none}"'
expect_eq "$OUT" "rank=0" "an explicit --ddp wins over DDP_MODE=off"

run env DDP_GPUS=abc srun -N1 true
expect_rc 1 "bad DDP_GPUS"  # srun stops before allocating
expect_in "$ERR" "ddp: DDP_GPUS=abc: --ddp-gpus='abc' is not a whole number" "bad DDP_GPUS message"
pass "DDP_* environment equivalents"
