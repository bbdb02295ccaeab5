#!/usr/bin/env bash
# A real training run through Slurm: PyTorch DDP (Gloo) on the real
# Fashion-MNIST data, 4 CPU workers on 2 nodes, one epoch; it must learn.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$DDP_SOURCE_DIR/examples/train_fashion_mnist.py" --epochs 1
expect_rc 0 "srun --ddp training"
line=$(grep '^epoch 1/1' <<<"$OUT") || { show training; fail "no epoch line from rank 0"; }
expect_in "$line" "(4 ranks," "trained with 4 ranks"
acc=$(sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p' <<<"$line")
# One epoch of SGD reaches about 0.82 here; 0.75 leaves room for other BLAS
# builds and still fails when training diverges or never runs. (Gradient
# averaging itself is checked exactly by allreduce_cpu.)
awk -v a="$acc" 'BEGIN { exit !(a >= 0.75) }' || fail "test accuracy $acc after one epoch, expected >= 0.75"
pass "4-rank DDP training on Fashion-MNIST reached accuracy $acc"
