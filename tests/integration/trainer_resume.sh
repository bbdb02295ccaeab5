#!/usr/bin/env bash
# Snapshots that survive failures, through Slurm: a worker killed mid-run
# with --ddp-restarts=1 resumes from rank 0's snapshot and ends with exactly
# the parameters of an uninterrupted run; a truncated newest snapshot is
# skipped with a warning; SIGUSR1 saves at once and, with --on-preempt exit,
# every rank stops at the same step.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
args=(--model mlp --data /usr/share/datasets/fashion-mnist --limit-train 2048 --limit-test 1000 --batch-size 64)

run srun -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --epochs 3 --dump-params "$WORK/clean"
expect_rc 0 "uninterrupted run"

# Rank 3 (node 1) SIGKILLs itself at global step 40 of 96 in the first attempt.
run srun -N2 --ddp=cpu --ddp-procs=2 --ddp-restarts=1 "$train" "${args[@]}" --epochs 3 \
  --snapshot-dir "$WORK/snaps" --crash-at-step 40 --dump-params "$WORK/resumed" --metrics "$WORK/m.jsonl"
expect_rc 0 "run with a killed worker and one restart"
expect_in "$ERR" "rank 3" "the agent names the killed rank"
expect_in "$OUT" "resuming from $WORK/snaps/snapshot-000000000032.ddps" "resumed from the end of epoch 1"
cmp -s "$WORK/clean" "$WORK/resumed" || fail "resumed run ended with other parameters than the uninterrupted one"
final=$(grep '"event":"final"' "$WORK/m.jsonl") || fail "no final metrics record"
expect_in "$final" '"resumed":1' "final record says it resumed"

# Truncate the newest snapshot (a node that died mid-copy); train one epoch more.
newest=$(ls "$WORK/snaps"/snapshot-*.ddps | tail -n 1)
truncate -s 1000 "$newest"
run srun -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --epochs 4 --snapshot-dir "$WORK/snaps"
expect_rc 0 "run after a truncated snapshot"
expect_in "$OUT" "warning: skipping snapshot $newest: truncated (1000 of" "the truncated file is named and skipped"
expect_in "$OUT" "resuming from $WORK/snaps/snapshot-000000000064.ddps" "resumed from the previous good one"

# Resumed from the end of training (a requeue that came after the last step):
# nothing to train, the final line measures the model it ends with (not NaN).
run srun -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --epochs 4 --snapshot-dir "$WORK/snaps"
expect_rc 0 "a run resumed from the end of training"
expect_in "$OUT" "nothing left to train" "it says there is nothing to train"
done_line=$(grep "ddp-train: done:" <<<"$OUT") || fail "no final line"
[[ $done_line =~ test\ accuracy\ 0\.[0-9]{4}$ ]] || fail "the final line of a run resumed at the end: $done_line"

# SIGUSR1 (Slurm's preemption warning, forwarded by the agent): save and exit.
bg_srun usr1 -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --epochs 1000 --save-every 0 \
  --snapshot-dir "$WORK/usr1" --on-preempt exit
wait_lines "$WORK/usr1.out" "epoch 2/1000" 1 60
job=$(squeue -h -o '%i' | head -n 1)
scancel --signal=USR1 "$job"
wait_exit "$BG_PID" 60
OUT=$(cat "$WORK/usr1.out") ERR=$(cat "$WORK/usr1.err")
expect_rc 0 "the run after SIGUSR1 with --on-preempt exit"
expect_in "$OUT" "on SIGUSR1" "rank 0 saved on SIGUSR1"
[[ -n $(ls "$WORK/usr1"/snapshot-*.ddps 2>/dev/null) ]] || fail "no snapshot after SIGUSR1"
expect_eq "$(node_processes "$train" | wc -l)" "0" "every rank stopped"
pass "restart resumes exactly, truncated snapshots are skipped, a run resumed at the end reports the model's accuracy, SIGUSR1 saves"
