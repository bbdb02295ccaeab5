#!/usr/bin/env bash
# --ddp-requeue against a real time limit: `sbatch --time=1 --signal=USR1@20`,
# and a worker that saves on USR1 and trains on (a PyTorch script that does
# not read DDP_REQUEUE). slurmctld sends the warning on its periodic pass,
# "up to 60 seconds earlier than specified" (sbatch(1)): with 50 s asked of a
# 1-minute job it can come at the job's very start, before the step runs, to
# no task, and the job ends TIMEOUT; 20 s asked leaves the step time to
# start. Node 0 asks slurmctld for the job's end and requeues within the time
# left, less KillWait and a margin, instead of waiting out RequeueWait (60 s),
# which would outlast the job. The job must be requeued (Restarts=1), never
# end TIMEOUT.
# Beside it, in the same minute, a 2-node job without --ddp-requeue meets its
# time limit. srun, signalled with the batch script, kills the step at once
# and exits (agent/slurm/time_limit_watch.hpp): node 0 said beforehand that
# the limit was near, with what to do.
# About a minute: the native pass runs it (label unsanitized, and not
# releases: tests/integration/CMakeLists.txt).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

cat >"$WORK/stubborn.py" <<'PY'
import signal, time
signal.signal(signal.SIGUSR1, lambda *a: print("saved on USR1, training on", flush=True))
time.sleep(1000)
PY
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun --ddp=cpu --ddp-requeue "$PYTHON" "$WORK/stubborn.py"
JOB
id=$(sbatch --parsable -N1 --time=1 --signal=USR1@20 --open-mode=append -o "$WORK/job.out" "$WORK/job.sh") ||
  fail "sbatch refused the job"
limited=$(sbatch --parsable -N2 --time=1 -o "$WORK/limited.out" -e "$WORK/limited.err" \
  --wrap "srun --ddp=cpu $PYTHON -u $WORK/stubborn.py") || fail "sbatch refused the job without --ddp-requeue"
deadline=$((SECONDS + 150)) state='' restarts=0
while ((SECONDS < deadline)); do
  info=$(scontrol show job "$id" 2>/dev/null) || break
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  [[ $restarts == 1 || $state == TIMEOUT || $state == COMPLETED || $state == FAILED ]] && break
  sleep 1
done
scancel "$id" 2>/dev/null || true
OUT=$(cat "$WORK/job.out") ERR='' RC="(job $id: $state)"
[[ $restarts == 1 ]] || { show "the time-limited job"; fail "job $id was not requeued before its time limit (state $state, Restarts=$restarts)"; }
expect_in "$OUT" "saved on USR1, training on" "the worker got the warning"
expect_in "$OUT" "requeued in" "node 0 cut its wait to the time left"
# The job without --ddp-requeue: ended by its time limit, and told so.
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)) && squeue -h -j "$limited" 2>/dev/null | grep -q .; do sleep 1; done
state=$(scontrol show job "$limited" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
scancel "$limited" 2>/dev/null || true
OUT=$(cat "$WORK/limited.out") ERR=$(sed 's/^\[rank [0-9]*\] //' "$WORK/limited.err")
export RC="(job $limited: $state)"  # for show(), on a failure
[[ $state == TIMEOUT ]] || { show "the job without --ddp-requeue"; fail "job $limited ended $state, not by its time limit"; }
expect_in "$ERR" "job $limited reaches its time limit in" "node 0 said the time limit was near"
expect_in "$ERR" "ask for more time with --time" "the time limit's fix is said"
expect_not_in "$ERR" "class killed" "a time limit is not called a kill from outside"
left=$(sed -n 's/.*job [0-9]* ends in \([0-9]*\) s.*/\1/p' <<<"$OUT" | head -n 1)
pass "--ddp-requeue with a time limit: the warning came with ${left:-?} s left, the job was requeued before its end (RequeueWait 60 s would have outlasted it); a job without it was told its time limit was near"
