#!/usr/bin/env bash
# --ddp-restarts=1: a worker dies in attempt 0 after a snapshot; every node
# restarts every worker together (TORCHELASTIC_RESTART_COUNT=1 everywhere, a
# fresh MASTER_PORT), they resume from the snapshot and the job succeeds.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
snap=$WORK/snapshots
mkdir -p "$snap"
chmod 777 "$WORK" "$snap"

run srun -N3 --ddp=cpu --ddp-procs=2 --ddp-restarts=1 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$snap"
expect_rc 0 "the job with one restart"
expect_eq "$(grep -c '^attempt=0 ' <<<"$OUT")" "6" "6 workers in attempt 0"
expect_eq "$(grep -c '^attempt=1 restart_count=1 resumed_from=' <<<"$OUT")" "6" "every worker restarted with count 1 and resumed"
expect_eq "$(grep '^attempt=1 ' <<<"$OUT" | grep -o 'resumed_from=[0-9]*' | sort -u)" "resumed_from=5" "all resumed from the step-5 snapshot"
p0=$(sed -n 's/^attempt=0 .*port=\([0-9]*\).*/\1/p' <<<"$OUT" | sort -u)
p1=$(sed -n 's/^attempt=1 .*port=\([0-9]*\).*/\1/p' <<<"$OUT" | sort -u)
[[ -n $p0 && -n $p1 && $p0 != "$p1" ]] || fail "MASTER_PORT must change between attempts (got '$p0' and '$p1')"
expect_eq "$(grep -c 'final step=10' <<<"$OUT")" "6" "training finished in attempt 1"

# --ddp-port: the user's MASTER_PORT in every attempt (node 0 gives the
# attempt's claim back before it claims the next).
rm -f "$snap"/*
run srun -N2 --ddp=cpu --ddp-procs=2 --ddp-port=24777 --ddp-restarts=1 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$snap"
expect_rc 0 "a restart with --ddp-port"
expect_eq "$(sed -n 's/^attempt=\([01]\) .*port=\([0-9]*\).*/\1 \2/p' <<<"$OUT" | sort -u | tr '\n' ' ')" \
  "0 24777 1 24777 " "both attempts on the user's port"

# Without restarts left the job ends with the failure.
rm -f "$snap"/*
run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/resume.py" "$snap"
expect_rc 3 "no restarts: the failed worker's code"
expect_in "$ERR" "root cause: worker rank 3 (local rank 1) on node 1" "root cause"
expect_in "$ERR" "simulated failure at step 5" "the root cause quotes the worker's stderr"
pass "restarts: all nodes together, resumed from the snapshot"
