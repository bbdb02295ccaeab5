#!/usr/bin/env bash
# --ddp-requeue: Slurm's warning signal (USR1, as `sbatch --signal=USR1@T`
# sends it before the time limit or a preemption) reaches every worker, which
# saves a snapshot and exits (ddp-train ends after it by itself: the agent
# tells the workers DDP_REQUEUE=1, so no --on-preempt exit); node 0's agent
# then requeues the job (scontrol requeue: slurm_requeue()) and holds the step
# until Slurm ends it, so the batch script goes no further. The requeued job
# runs the script again, resumes from the snapshot and ends with exactly the
# parameters of an uninterrupted run; Slurm counts Restarts=1. The signal is
# sent with `scancel --signal=USR1`, which delivers it to the job's steps as
# --signal does, at a moment the test chooses (slurmctld sends --signal's only
# on its 30-second time-limit pass). Arrays: requeue_array.sh. Refused up front:
# --ddp-requeue outside a batch job, and in a job submitted with --no-requeue.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
train=${1:?path to ddp-train}
args=(--model mlp --data /usr/share/datasets/fashion-mnist --limit-train 30000 --limit-test 1000 --batch-size 64
  --epochs 6)

run srun -N2 --ddp=cpu --ddp-procs=2 "$train" "${args[@]}" --dump-params "$WORK/clean"
expect_rc 0 "uninterrupted run"

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun --ddp=cpu --ddp-procs=2 --ddp-requeue --ddp-verbose "$train" ${args[*]} --snapshot-dir "$WORK/snaps" \
  --save-every 0 --dump-params "$WORK/requeued"
echo "script went on after srun: \$?"
JOB
id=$(sbatch --parsable -N2 --open-mode=append -o "$WORK/job.out" -e "$WORK/job.err" "$WORK/job.sh") ||
  fail "sbatch refused the job"

wait_lines "$WORK/job.out" "epoch 2/6" 1 60
scancel --signal=USR1 "$id"
signalled=$(date +%s.%N) again=

# Until the job has been requeued and has run to its end.
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  info=$(scontrol show job "$id" 2>/dev/null)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  [[ -z $again && $state == RUNNING && $restarts == 1 ]] &&
    again=$("$PYTHON" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$signalled")
  [[ $state == COMPLETED || $state == FAILED || $state == CANCELLED || $state == TIMEOUT ]] && break
  sleep 0.2
done
OUT=$(cat "$WORK/job.out") ERR=$(cat "$WORK/job.err")
((SECONDS < deadline)) || { show "the requeued job"; diagnose; fail "job $id did not end within 120 s (state $state)"; }
[[ $state == COMPLETED ]] || { show "the requeued job"; fail "job $id ended $state, expected COMPLETED"; }
expect_eq "$restarts" "1" "Slurm's Restarts count of job $id"
expect_in "$ERR" "SIGUSR1 (Slurm's warning): job $id is requeued once every worker has ended" "node 0 took the warning"
# Slurm may end the step the moment the requeue lands, before node 0's agent
# has read scontrol's answer and said so: either line shows the requeue.
[[ $ERR == *"job $id requeued: it goes back to the queue"* || $ERR == *"JOB $id ON "*"DUE TO JOB REQUEUE"* ]] ||
  { show "the requeued job"; fail "no sign that node 0 requeued job $id"; }
expect_in "$OUT" "on SIGUSR1" "rank 0 saved on SIGUSR1 in the first run"
expect_in "$OUT" "exiting after the snapshot (DDP_REQUEUE=1: --ddp-requeue requeues the job)" \
  "ddp-train ended after its save by itself (it trained on before, until RequeueWait ran out)"
expect_eq "$(grep -c 'epoch 6/6' <<<"$OUT")" "1" "only the requeued run trained to the end"
expect_in "$OUT" "resuming from $WORK/snaps/snapshot-" "the second run resumed from the snapshot"
expect_eq "$(grep -c '^script went on after srun' <<<"$OUT")" "1" "the first run's script stopped at srun; the second went on"
expect_in "$OUT" "script went on after srun: 0" "the second run's srun succeeded"
cmp -s "$WORK/clean" "$WORK/requeued" || fail "the requeued job ended with other parameters than the uninterrupted run"

# sbatch --ddp-requeue and the job's --signal as sbatch reads it: the command
# line, #SBATCH lines; no --signal, or one the agents never get, is warned
# about. (sbatch --hold: submitted, checked, never run.)
printf '#!/bin/bash\n#SBATCH --signal=B:USR1@60\nsrun true\n' >"$WORK/bsig.sh"
for how in "--signal=USR1@60" "" "--signal=TERM@60"; do
  held=$(sbatch --parsable --hold --ddp=cpu --ddp-requeue $how "$WORK/bsig.sh" 2>"$WORK/held.err") || fail "sbatch $how refused"
  scancel "$held"
  case $how in
  --signal=USR1*) expect_not_in "$(cat "$WORK/held.err")" "warning" "sbatch $how: no warning" ;;
  "") expect_in "$(cat "$WORK/held.err")" "reaches the batch shell only" "#SBATCH --signal=B:USR1@60: warned" ;;
  *) expect_in "$(cat "$WORK/held.err")" "warns with another signal" "sbatch $how: warned" ;;
  esac
done

# Refused before anything starts.
run srun -N2 --ddp=cpu --ddp-requeue true
expect_failure "--ddp-requeue outside a batch job"
expect_in "$ERR" "ddp: --ddp-requeue needs a batch job" "the refusal says why"
printf '#!/bin/bash\nsrun --ddp=cpu --ddp-requeue true\n' >"$WORK/norequeue.sh"
sbatch_wait --no-requeue -N1 -o "$WORK/norequeue.out" "$WORK/norequeue.sh"
expect_in "$(cat "$WORK/norequeue.out")" "may not be requeued (sbatch --no-requeue" "a --no-requeue job is refused"
pass "--ddp-requeue: saved on Slurm's warning, requeued once (Restarts=1), running again ${again:-?} s after the signal (cred_expire=10), resumed to the uninterrupted run's parameters; sbatch warns about a missing or unfit --signal; refusals"
