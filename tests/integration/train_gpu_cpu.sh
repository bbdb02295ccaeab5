#!/usr/bin/env bash
# The GPU example (examples/train_gpu.py) on its CPU path (Gloo, no CUDA)
# under srun --ddp, 4 workers on 2 nodes: it trains, writes its progress file
# (--ddp-hang-timeout), checkpoints and resumes, and its ranks save together
# on SIGUSR1; on DDP_REQUEUE=1 it ends after that checkpoint. Its batch
# script, examples/train-gpu.sbatch, on the cluster's fake GPUs. And the hang
# snippet of doc/failures.md under a real --ddp-hang-timeout: the file the
# agent gives each worker holds its last step.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

example=$DDP_SOURCE_DIR/examples/train_gpu.py

# --- trains, with a hang timeout, and checkpoints -----------------------------
run srun -N2 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=60 "$PYTHON" "$example" --steps 40 --log-every 10 \
  --checkpoint-dir "$WORK/ck"
expect_rc 0 "the example on CPU under srun --ddp"
expect_in "$OUT" "done: 40 steps" "rank 0 trained 40 steps"
expect_in "$OUT" "4 ranks, backend gloo, device cpu" "4 ranks, Gloo on the CPU without CUDA"
expect_not_in "$ERR" "watched nothing" "every worker wrote its DDP_PROGRESS_FILE"
first=$(sed -n 's/^step 0\/40 loss \([0-9.]*\)$/\1/p' <<<"$OUT")
last=$(sed -n 's/^done: 40 steps, loss \([0-9.]*\),.*/\1/p' <<<"$OUT")
# The seeded model starts near loss 30 on its synthetic data and ends near 1
# after 40 steps here; a quarter of the start still fails when it does not learn.
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a > 0 && b < a / 4) }' || { show training; fail "loss $first -> $last"; }
[[ -s $WORK/ck/checkpoint.pt ]] || fail "no checkpoint in $WORK/ck"

# --- resumes from the checkpoint -----------------------------------------------
run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$example" --steps 50 --log-every 10 --checkpoint-dir "$WORK/ck"
expect_rc 0 "the second run"
expect_in "$OUT" "resumed from $WORK/ck/checkpoint.pt at step 40" "it resumed after the first run's last step"
expect_in "$OUT" "done: 50 steps" "and trained to 50"

# --- SIGUSR1: every rank saves the same step, training goes on ------------------
bg_srun usr1 -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$example" --steps 100000000 --log-every 100 \
  --checkpoint-every 0 --checkpoint-dir "$WORK/usr1"
wait_lines "$WORK/usr1.out" "step 0/" 1 60
job=$(squeue -h -o '%i' | head -n 1)
scancel --signal=USR1 "$job"
wait_lines "$WORK/usr1.out" "SIGUSR1: saved step" 1 60
saved=$(sed -n 's/.*SIGUSR1: saved step \([0-9]*\)$/\1/p' "$WORK/usr1.out")
# It trains on: a step logged after the one it saved (a log line every 100 steps).
deadline=$((SECONDS + 60)) went_on=0
while ((SECONDS < deadline)) && kill -0 "$BG_PID" 2>/dev/null; do
  went_on=$(sed -n 's/.*step \([0-9]*\)\/100000000 loss.*/\1/p' "$WORK/usr1.out" | awk -v s="$saved" '$1 > s { n++ } END { print n + 0 }')
  ((went_on > 0)) && break
  sleep 0.2
done
((went_on > 0)) || { cat "$WORK/usr1.out" "$WORK/usr1.err" >&2; fail "no step after $saved, the one saved on SIGUSR1"; }
scancel "$job"
wait_exit "$BG_PID" 60
expect_eq "$(grep -c 'SIGUSR1: saved step' "$WORK/usr1.out")" "1" "one checkpoint for the one signal"
run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$example" --steps $((saved + 2)) --checkpoint-dir "$WORK/usr1"
expect_rc 0 "the run after SIGUSR1's checkpoint"
grep -qx "resumed from $WORK/usr1/checkpoint.pt at step $((saved + 1))" <<<"$OUT" ||
  { show resume; fail "it did not resume after step $saved, the one saved on SIGUSR1"; }

# --- DDP_REQUEUE=1 (--ddp-requeue's workers): it ends after the checkpoint ------
# One worker with torchrun's variables by hand: the agent sets DDP_REQUEUE=1
# only in a batch job with --ddp-requeue (integration.requeue runs that path).
env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((20000 + RANDOM % 10000)) \
  DDP_REQUEUE=1 "$PYTHON" "$example" --steps 100000000 --log-every 1000 --checkpoint-every 0 \
  --checkpoint-dir "$WORK/requeue" >"$WORK/requeue.out" 2>"$WORK/requeue.err" &
pid=$!
wait_lines "$WORK/requeue.out" "step 0/" 1 60
kill -USR1 "$pid"
wait_exit "$pid" 60
expect_rc 0 "exit after SIGUSR1 with DDP_REQUEUE=1"
expect_in "$(cat "$WORK/requeue.out")" "SIGUSR1: saved step" "it saved first"
[[ -s $WORK/requeue/checkpoint.pt ]] || fail "no checkpoint in $WORK/requeue"

# --- examples/train-gpu.sbatch as written, on this cluster's fake GPUs ----------
# GPU mode (2 workers a node, CUDA_VISIBLE_DEVICES set) with torch finding
# no CUDA: the CPU path again, through the script's #SBATCH lines (--ddp,
# --ddp-requeue, --ddp-hang-timeout, --signal); 2 GPUs a node here, not 4.
sbatch_wait -N2 --gpus-per-node=2 --time=5 --chdir="$DDP_SOURCE_DIR" -o "$WORK/sbatch.out" -e "$WORK/sbatch.err" \
  --export=ALL,STEPS=40,CHECKPOINT_DIR="$WORK/sbatch-ck" "$DDP_SOURCE_DIR/examples/train-gpu.sbatch"
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/sbatch.out") ERR=$(cat "$WORK/sbatch.err")
expect_rc 0 "sbatch examples/train-gpu.sbatch"
expect_in "$OUT" "done: 40 steps" "the batch job trained 40 steps"
expect_in "$OUT" "4 ranks, backend gloo, device cpu" "one worker per (fake) GPU: 4 ranks on 2 nodes"
[[ -s $WORK/sbatch-ck/checkpoint.pt ]] || fail "no checkpoint in $WORK/sbatch-ck"

# --- doc/failures.md's hang snippet under a real --ddp-hang-timeout ------------
"$DDP_SOURCE_DIR/tests/lint/doc_snippets.py" "$DDP_SOURCE_DIR" --print hang-progress >"$WORK/progress.py"
run srun -N2 --ddp=cpu --ddp-procs=1 --ddp-hang-timeout=30 "$PYTHON" "$WORK/progress.py"
expect_rc 0 "the snippet under srun --ddp --ddp-hang-timeout"
expect_eq "$(grep -c '^progress file holds 2$' <<<"$OUT")" "2" "each worker's DDP_PROGRESS_FILE holds its last step"
expect_not_in "$ERR" "watched nothing" "the agent saw them written"
run srun -N2 --ddp=cpu --ddp-procs=1 "$PYTHON" "$WORK/progress.py"
expect_rc 0 "the snippet under srun --ddp without a hang timeout"
expect_eq "$(grep -c '^no progress file$' <<<"$OUT")" "2" "no DDP_PROGRESS_FILE, and the snippet trains on"
pass "examples/train_gpu.py on CPU: trains, checkpoints, resumes, saves on SIGUSR1; the hang snippet works under srun"
