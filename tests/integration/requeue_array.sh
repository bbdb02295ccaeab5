#!/usr/bin/env bash
# --ddp-requeue in a job array: one task always runs under the array's own job
# id (the task started last keeps the array's record), and `scontrol requeue`
# of that id requeues every task. Slurm's warning to that task must requeue
# it alone (node 0 names it ARRAYJOBID_TASKID); the other task trains on
# untouched. About a minute of two training tasks: the native pass runs it
# (label unsanitized, and not releases: tests/integration/CMakeLists.txt).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
args=(--model mlp --data /usr/share/datasets/fashion-mnist --limit-train 30000 --limit-test 1000 --batch-size 64
  --epochs 8)

cat >"$WORK/array.sh" <<JOB
#!/bin/bash
srun --ddp=cpu --ddp-procs=1 --ddp-requeue "$train" ${args[*]} --snapshot-dir "$WORK/asnaps_\$SLURM_ARRAY_TASK_ID" \
  --save-every 0 --on-preempt exit
echo "task \$SLURM_ARRAY_TASK_ID went on after srun: \$?"
JOB
aid=$(sbatch --parsable --array=0-1 -N1 --open-mode=append -o "$WORK/array_%a.out" -e "$WORK/array_%a.err" \
  "$WORK/array.sh") || fail "sbatch refused the array"
# Both train (their first epoch reported); the signal goes at once: a task
# trains its 8 epochs in about 25 s, and waiting for the second epoch of both
# can let the signalled task end before the signal comes (COMPLETED,
# Restarts 0).
wait_lines "$WORK/array_0.out" "epoch 1/8" 1 60
wait_lines "$WORK/array_1.out" "epoch 1/8" 1 30
task_job() { scontrol show job "${aid}_$1" | sed -n 's/^JobId=\([0-9]*\) .*/\1/p'; }
own=
for t in 0 1; do [[ $(task_job $t) == "$aid" ]] && own=$t; done
[[ -n $own ]] || fail "no task of array $aid runs under the array's own id ($(task_job 0), $(task_job 1))"
other=$((1 - own))
scancel --signal=USR1 "${aid}_$own"
# Each task's end as it comes: the task that trains on ends long before the
# requeued one starts again, and Slurm forgets an ended job after MinJobAge.
declare -A final=() restarts=()
deadline=$((SECONDS + 120))
while ((SECONDS < deadline && ${#final[@]} < 2)); do
  for t in 0 1; do
    [[ -z ${final[$t]:-} ]] || continue
    info=$(scontrol show job "${aid}_$t" 2>/dev/null) || continue
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info" | head -n 1)
    case $state in
    COMPLETED | FAILED | CANCELLED | TIMEOUT)
      final[$t]=$state
      restarts[$t]=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info" | head -n 1)
      ;;
    esac
  done
  sleep 0.5
done
OUT=$(cat "$WORK"/array_*.out) ERR=$(cat "$WORK"/array_*.err)
((${#final[@]} == 2)) || { show "the array"; diagnose; fail "array $aid did not end within 120 s"; }
# Should the signalled task end unrequeued, what it and Slurm said.
if [[ ${restarts[$own]:-} != 1 ]]; then
  { echo "--- array task $own's output:"; tail -n 30 "$WORK/array_$own.out" "$WORK/array_$own.err"
    echo "--- scontrol show job ${aid}_$own:"; scontrol show job "${aid}_$own"; } >&2 2>/dev/null || true
fi
for t in 0 1; do
  expect_eq "${final[$t]}" "COMPLETED" "array task $t's state"
  expect_eq "${restarts[$t]}" "$((t == own ? 1 : 0))" "array task $t's Restarts (task $own, job $aid, was signalled)"
done
expect_in "$(cat "$WORK/array_$own.err")" "job ${aid}_$own is requeued once every worker has ended" \
  "the signalled task names itself by its array name"
expect_eq "$(grep -c 'went on after srun' "$WORK/array_$other.out")" "1" "task $other ran once"
pass "--ddp-requeue in an array: the task under the array's own id ($aid, task $own) alone was requeued (Restarts 1 and 0)"
