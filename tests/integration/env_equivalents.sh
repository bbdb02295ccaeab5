#!/usr/bin/env bash
# The environment never breaks or changes a job that did not ask for --ddp:
# neither the names the plugin read before 0.4.0 (DDP_PORT and the like, which
# training scripts use for their own purposes) nor the SDDP_* variables that
# stand in for the options now, in srun, sbatch, the batch script and its
# steps. Under --ddp, SDDP_* fill in what no option said, a malformed one is
# refused before anything is allocated, and the old names are named in one
# warning.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

# A clean environment to compare with: none of the names under test.
for var in $(compgen -e); do
  [[ $var =~ ^S?DDP_ && $var != DDP_SOURCE_DIR ]] && unset "$var"
done

# srun's stderr without its notes on waiting for a node (the previous step may still be ending).
srun_err() { grep -v -E '^srun: job [0-9]+ (queued and waiting for resources|has been allocated resources)$' <<<"$ERR" || true; }

# What each task sees; a step that DDP took over shows other task counts, RANK and MASTER_ADDR.
probe='echo "node=$SLURM_NODEID task=$SLURM_PROCID/$SLURM_NTASKS rank=${RANK-unset} world=${WORLD_SIZE-unset} master=${MASTER_ADDR-unset}"'
cases=(DDP_PORT=abc DDP_VERBOSE=true DDP_MODE=fsdp DDP_RESTARTS=x DDP_HANG_TIMEOUT=-1 DDP_GPUS=4 DDP_PROCS=2
  SDDP_MODE=cpu SDDP_MODE=fsdp SDDP_PROCS=2 SDDP_GPUS=4 SDDP_PORT=abc SDDP_VERBOSE=true SDDP_RESTARTS=x
  SDDP_HANG_TIMEOUT=-1 SDDP_SPARES=1 SDDP_REQUEUE=1)

# --- without --ddp: srun -------------------------------------------------------
run srun -N2 sh -c "$probe"
expect_rc 0 "srun -N2 in a clean environment"
clean_out=$(sort <<<"$OUT") clean_err=$(srun_err)
expect_eq "$clean_out" $'node=0 task=0/2 rank=unset world=unset master=unset\nnode=1 task=1/2 rank=unset world=unset master=unset' \
  "control: a plain srun -N2"
for case in "${cases[@]}"; do
  run env "$case" srun -N2 sh -c "$probe"
  expect_rc 0 "$case srun -N2 (no --ddp)"
  expect_eq "$(sort <<<"$OUT")" "$clean_out" "$case srun -N2 (no --ddp): the tasks' view"
  expect_eq "$(srun_err)" "$clean_err" "$case srun -N2 (no --ddp): stderr"
done

# --- without --ddp: sbatch, its batch script and the script's srun ------------
# All jobs at once (each takes one core of two nodes), then waited for together.
printf '#!/bin/sh\n%s\nsrun %s\n' "echo \"batch master=\${MASTER_ADDR-unset} nnodes=\${DDP_NNODES-unset}\"" \
  "sh -c '$probe' | sort" >"$WORK/job.sh"
declare -A job_of=()
submit() {  # submit NAME [VAR=VALUE...] -- SBATCH_ARGS...: job id in job_of[NAME], or fails the test
  local name=$1 vars=(); shift
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  run env "${vars[@]}" sbatch --parsable -N2 -o "$WORK/$name.out" -e "$WORK/$name.err" "$@" "$WORK/job.sh"
  expect_rc 0 "${vars[*]} sbatch $*"
  job_of[$name]=$OUT
  SUBMIT_ERR=$ERR
}
declare -A rc_of=()
# Until every submitted job has ended (120 s), each one's exit code kept as
# soon as it ends: slurmctld forgets a job MinJobAge (30 s) after its end,
# and on two cores the last of them can end that long after the first.
wait_jobs() {
  local deadline=$((SECONDS + 120)) name info state pending
  while ((SECONDS < deadline)); do
    pending=0
    for name in "${!job_of[@]}"; do
      [[ -n ${rc_of[$name]:-} ]] && continue
      info=$(scontrol show job "${job_of[$name]}" 2>/dev/null)
      state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
      case $state in
        PENDING|RUNNING|CONFIGURING|COMPLETING|"") pending=1 ;;
        *) rc_of[$name]=$(sed -n 's/.*ExitCode=\([0-9]*\):.*/\1/p' <<<"$info") ;;
      esac
    done
    ((pending)) || return 0
    sleep 0.3
  done
  diagnose
  fail "the batch jobs did not end within 120 s"
}
job_rc() { echo "${rc_of[$1]:-}"; }

submit clean --
expect_eq "$SUBMIT_ERR" "" "control: sbatch in a clean environment says nothing"
for i in "${!cases[@]}"; do
  submit "case$i" "${cases[$i]}" --
  expect_eq "$SUBMIT_ERR" "" "${cases[$i]} sbatch (no --ddp): sbatch's stderr"
done
# Under sbatch --ddp, for below: SDDP_PROCS reaches the script's srun; one warning for the old name.
submit ddp SDDP_PROCS=2 DDP_RESTARTS=1 -- --ddp=cpu
ddp_submit_err=$SUBMIT_ERR
wait_jobs

expect_eq "$(job_rc clean)" 0 "control: the clean batch job"
clean_job=$(cat "$WORK/clean.out")
expect_eq "$clean_job" $'batch master=unset nnodes=unset\nnode=0 task=0/2 rank=unset world=unset master=unset\nnode=1 task=1/2 rank=unset world=unset master=unset' \
  "control: the clean batch job's output"
for i in "${!cases[@]}"; do
  expect_eq "$(job_rc "case$i")" 0 "${cases[$i]} sbatch (no --ddp): the job's exit code"
  expect_eq "$(cat "$WORK/case$i.out")" "$clean_job" "${cases[$i]} sbatch (no --ddp): the job's output"
  expect_eq "$(cat "$WORK/case$i.err")" "$(cat "$WORK/clean.err")" "${cases[$i]} sbatch (no --ddp): the job's stderr"
done
pass "without --ddp no DDP_* or SDDP_* variable fails or changes srun, sbatch, the batch script or its steps"

# --- under --ddp --------------------------------------------------------------
run env SDDP_PROCS=2 srun -N2 --ddp=cpu sh -c "$probe"
expect_rc 0 "SDDP_PROCS=2 srun -N2 --ddp=cpu"
expect_eq "$(grep -c 'world=4 ' <<<"$OUT")" "4" "SDDP_PROCS=2 fills in 2 workers per node"
expect_not_in "$ERR" "warning" "no warning without old names"

run env SDDP_MODE=gpu SDDP_PROCS=3 srun -N2 --ddp=cpu --ddp-procs=1 sh -c "$probe"
expect_rc 0 "SDDP_MODE=gpu SDDP_PROCS=3 srun --ddp=cpu --ddp-procs=1"
expect_eq "$(grep -c 'world=2 ' <<<"$OUT")" "2" "the options win over SDDP_MODE and SDDP_PROCS"

run env SDDP_MODE=off srun -N1 --ddp=cpu sh -c "$probe"
expect_in "$OUT" "rank=0 world=1" "an explicit --ddp wins over SDDP_MODE=off"

run env SDDP_GPUS=abc srun -N1 --ddp true
expect_rc 1 "SDDP_GPUS=abc srun --ddp"  # srun stops before allocating
expect_in "$ERR" "ddp: SDDP_GPUS='abc' is not a whole number; use a number between 1 and" "the variable named"
expect_in "$ERR" ", or unset SDDP_GPUS" "the fix named"

run env DDP_PROCS=2 DDP_RESTARTS=1 DDP_PORT=abc DDP_REQUEUE=1 srun -N2 --ddp=cpu sh -c "$probe"
expect_rc 0 "old names under srun --ddp"
expect_eq "$(grep -c 'world=2 ' <<<"$OUT")" "2" "DDP_PROCS=2 is not read: one worker per node"
expect_eq "$(grep -c 'not read any more' <<<"$ERR")" "1" "one warning line for the old names"
expect_in "$ERR" "ddp: warning: DDP_PROCS, DDP_PORT, DDP_RESTARTS are not read any more: set SDDP_PROCS, SDDP_PORT, SDDP_RESTARTS" \
  "the warning names the old and the new names"

expect_eq "$(grep -c 'not read any more' <<<"$ddp_submit_err")" "1" "sbatch --ddp: one warning line"
expect_in "$ddp_submit_err" "ddp: warning: DDP_RESTARTS is not read any more: set SDDP_RESTARTS" "sbatch --ddp: the warning"
expect_eq "$(job_rc ddp)" 0 "SDDP_PROCS=2 sbatch --ddp=cpu"
expect_eq "$(grep -c 'world=4 ' "$WORK/ddp.out")" "4" "SDDP_PROCS=2 at sbatch --ddp fills in the script's srun"
pass "under --ddp SDDP_* fill in what no option said; a bad one is refused with the fix; old names warned about once"
