#!/usr/bin/env bash
# ddp-train --model gpt, the small config (2 layers, 4 heads, width 128,
# context 64, bytes) on fortune's texts (Debian's fortunes package), through
# the whole product:
#   - 1 rank with 2 accumulation steps and 2 ranks reach the same parameters
#     (a row's window depends on the step and the row, not on the rank);
#   - 8 steps on 2 ranks (warm-up, cosine, clipping, weight decay) give
#     PyTorch's loss at every step, within 1e-4, from the same parameters;
#   - --data random (uniform tokens, for throughput): the loss stays near
#     ln(256), and an image model refuses it;
#   - srun -N2 --ddp=cpu --ddp-procs=1 trains it: the loss falls, and the
#     held-out loss after 200 steps of 8 sequences is under 2.9 nats a byte
#     (it reaches 2.6-2.7; uniform over bytes is 5.55);
#   - a worker killed at step 15 with one restart resumes from the step-10
#     snapshot to exactly the uninterrupted run's parameters (AdamW's moments
#     and step count, the schedule, and each rank's place in the token stream).
# Its layers against finite differences and PyTorch: unit.gpt_layers.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
agent=${2:?path to ddp-agent}
tokenize=$(dirname "$train")/ddp-tokenize
fortunes=/usr/share/games/fortunes

run "$tokenize" "$fortunes/cookie" "$fortunes/computers" "$fortunes/songs-poems" --out "$WORK/fortunes"
expect_rc 0 "ddp-tokenize fortune's texts"
data=(--model gpt --data "$WORK/fortunes.train.tok")

# --- 1 rank and 2 ranks ---------------------------------------------------------------
run "$train" "${data[@]}" --steps 6 --batch-size 8 --accum-steps 2 --dump-params "$WORK/p1"
expect_rc 0 "1 rank, 2 accumulation steps"
run "$agent" --nproc 2 -- "$train" "${data[@]}" --steps 6 --batch-size 8 --dump-params "$WORK/p2"
expect_rc 0 "2 ranks"
diff=$(max_param_diff "$WORK/p1" "$WORK/p2" 437760) || fail "comparing the parameters of 1 and 2 ranks"
awk -v d="$diff" 'BEGIN { exit !(d <= 1e-5) }' || fail "2 ranks differ from 1 rank by $diff (> 1e-5)"

# --- the whole run against PyTorch ---------------------------------------------------------
# The same initial parameters, the same windows, warm-up and cosine, clipping
# and weight decay: ddp-train on 2 ranks and the PyTorch model in one process
# (tests/unit/gpt_reference.py --train) give the same loss at every step.
reference=$(dirname "$0")/../unit/gpt_reference.py
/usr/bin/python3 "$reference" --init "$WORK/init" 2 128 64 256 5 || fail "gpt_reference.py --init"
run "$agent" --nproc 2 -- "$train" "${data[@]}" --init-params "$WORK/init" --steps 8 --batch-size 8 \
  --warmup-steps 2 --log-every 1 --metrics "$WORK/parity"
expect_rc 0 "8 steps from the reference's parameters on 2 ranks"
ours=$(sed -n 's/.*"event":"step".*"train_loss":\([0-9.e+-]*\).*/\1/p' "$WORK/parity" | tr '\n' ' ')
theirs=$(/usr/bin/python3 "$reference" --train "$WORK/init" "$WORK/fortunes.train.tok" 2 4 128 64 256 8 8 1e-3 2 1e-4) ||
  fail "gpt_reference.py --train"
# Tolerance: 1e-4 at every step (the two agree to about 5e-7).
parity=$(awk -v a="$ours" -v b="$theirs" 'BEGIN {
  n = split(a, x, " "); m = split(b, y, " "); if (n != 8 || m != 8) { print "counts " n " " m; exit 1 }
  worst = 0; for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > worst) worst = d }
  print worst; exit !(worst <= 1e-4) }') || fail "ddp-train's losses ($ours) are not PyTorch's ($theirs): $parity"

# --- random tokens: throughput with no text, nothing to learn ---------------------------
run "$agent" --nproc 2 -- "$train" --model gpt --data random --steps 10 --batch-size 8 --log-every 10
expect_rc 0 "--data random on 2 ranks"
expect_in "$OUT" "data: random (4194305 tokens" "random tokens"
random_loss=$(sed -n 's/.*step 10\/10: loss \([0-9.]*\),.*tokens\/s.*/\1/p' <<<"$OUT")
# ln(256) = 5.545: uniform tokens stay there.
awk -v l="$random_loss" 'BEGIN { exit !(l != "" && l > 5.4 && l < 5.7) }' ||
  fail "the loss on uniform random tokens was '$random_loss', expected near ln(256) = 5.545"
run "$train" --model mlp --data random
expect_rc 1 "--data random with an image model"
expect_in "$ERR" "--data random (random tokens, for throughput) is --model gpt's" "refused for --model mlp"

# --- through Slurm: it learns ----------------------------------------------------------
run srun -N2 --ddp=cpu --ddp-procs=1 "$train" "${data[@]}" --eval-data "$WORK/fortunes.val.tok" --steps 200 \
  --batch-size 8 --lr 2e-3 --log-every 20 --metrics "$WORK/metrics"
expect_rc 0 "srun --ddp ddp-train --model gpt"
expect_in "$OUT" "gpt 2 layers, 4 heads, width 128, context 64, vocabulary 256 (padded 256) on 2 rank(s)" \
  "the small GPT on 2 ranks"
losses=$(sed -n 's/.*"event":"step".*"train_loss":\([0-9.e+-]*\).*/\1/p' "$WORK/metrics")
first=$(head -n 1 <<<"$losses") last=$(tail -n 1 <<<"$losses")
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 1) }' || fail "the loss fell from $first to $last only"
held=$(sed -n 's/.*done:.*held-out loss \([0-9.]*\).*/\1/p' <<<"$OUT")
awk -v h="$held" 'BEGIN { exit !(h != "" && h < 2.9) }' || fail "held-out loss $held after 200 steps, expected < 2.9"

# --- an exact resume -------------------------------------------------------------------
args=("${data[@]}" --steps 20 --batch-size 8 --save-every-steps 10)
run srun -N2 --ddp=cpu --ddp-procs=1 "$train" "${args[@]}" --dump-params "$WORK/clean"
expect_rc 0 "20 steps"
run srun -N2 --ddp=cpu --ddp-procs=1 --ddp-restarts=1 "$train" "${args[@]}" --snapshot-dir "$WORK/snaps" \
  --crash-at-step 15 --dump-params "$WORK/resumed"
expect_rc 0 "20 steps with a worker killed at step 15 and one restart"
expect_in "$OUT" "resuming from $WORK/snaps/snapshot-000000000010.ddps" "resumed from step 10"
cmp -s "$WORK/clean" "$WORK/resumed" || fail "the resumed GPT ended with other parameters than the uninterrupted one"
pass "the GPT: 1 and 2 ranks agree ($diff), PyTorch's losses within $parity, random tokens stay at loss $random_loss, it learns through srun --ddp (loss $first to $last, held-out $held) and \
resumes exactly"
