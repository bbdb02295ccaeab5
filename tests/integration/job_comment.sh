#!/usr/bin/env bash
# JobComment= in ddp.conf: by default node 0 writes a failed step's verdict
# into the job's Comment after the user's own text; with JobComment=no (a
# site whose accounting uses the Comment) the Comment stays exactly as the
# user set it. ddp-check-config reports the setting. Also says which form
# this release's scontrol answers node 0 in (agent/slurm/job_fields.hpp).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=${1:?path to the site config named in plugstack.conf}
check_config=${2:?path to ddp-check-config}
good=$(cat "$config")
restore() { printf '%s\n' "$good" >"$config"; }
trap 'restore; cleanup_work' EXIT

# failing_job: a --ddp step whose worker exits 3, in a job with --comment=acct-123; JOB its id.
failing_job() {
  sbatch_wait -N1 -o "$WORK/$1.out" -e "$WORK/$1.err" --comment=acct-123 --wrap "srun --ddp=cpu sh -c 'exit 3'"
  JOB=$(squeue -h -t all -u "$(id -un)" -o %i | sort -n | tail -n 1)
  expect_in "$(cat "$WORK/$1.err")" "exited with code 3" "the step failed ($1)"
}

printf '%s\nJobComment=no\n' "$good" >"$config"
run "$check_config" --plugstack "$CLUSTER_DIR/plugstack.conf"
expect_rc 0 "ddp-check-config accepts JobComment=no"
expect_in "$OUT" "JobComment=no" "ddp-check-config reports it"
failing_job off
expect_eq "$(squeue -h -t all -j "$JOB" -o %k)" "acct-123" "JobComment=no leaves the Comment exactly as the user set it"

restore
failing_job default
if json=$(scontrol --json show job "$JOB" 2>/dev/null) && [[ $json == *'"jobs"'* ]]; then
  echo "this release's scontrol ($(slurm_version)) answers node 0 with --json; the fields it reads:"
  "$PYTHON" -c 'import json, sys
job = json.load(sys.stdin)["jobs"][0]
print({k: job.get(k) for k in ("job_state", "state_reason", "end_time", "preempt_time", "time_limit")})' <<<"$json"
else
  echo "this release's scontrol ($(slurm_version)) answers node 0 with -o (no JSON)"
fi
expect_in "$(squeue -h -t all -j "$JOB" -o %k)" "acct-123 | ddp: step $JOB.0: class " \
  "by default the verdict follows the user's Comment"
pass "JobComment=no keeps the Comment; the default adds the verdict after the user's text"
