#!/usr/bin/env bash
# The README's main job: sbatch --ddp on 2 nodes, one CPU worker each, the
# MLP on the real Fashion-MNIST, global batch 128, 3 epochs: test accuracy
# >= 0.84 and a samples/s figure, with metrics written as JSON Lines. The same
# seed gives 0.847 to 0.858 depending on which OpenBLAS kernel the CPU gets
# (rounding differs), so 0.84 leaves room for that and none for a broken run.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun $train --model mlp --data /usr/share/datasets/fashion-mnist --epochs 3 --batch-size 128 \
  --metrics $WORK/metrics.jsonl
JOB
sbatch_wait -N2 --ddp=cpu --ddp-procs=1 -o "$WORK/out" -e "$WORK/err" "$WORK/job.sh"
OUT=$(cat "$WORK/out" 2>/dev/null || true) ERR=$(cat "$WORK/err" 2>/dev/null || true)
expect_rc 0 "sbatch --ddp main job"
expect_in "$OUT" "on 2 rank(s)" "two workers"
final=$(grep '"event":"final"' "$WORK/metrics.jsonl") || { show main-job; fail "no final metrics record"; }
acc=$(sed -n 's/.*"test_accuracy":\([0-9.]*\).*/\1/p' <<<"$final")
rate=$(sed -n 's/.*"samples_per_second":\([0-9.]*\).*/\1/p' <<<"$final")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.84) }' || fail "test accuracy $acc, expected >= 0.84"
expect_in "$final" '"world_size":2' "world size in the final record"
expect_eq "$(grep -c '"event":"epoch"' "$WORK/metrics.jsonl")" "3" "one record per epoch"
pass "main job: test accuracy $acc, $rate samples/s"
