#!/usr/bin/env bash
# Without StopGrace in the site config, the agents' grace follows Slurm's
# KillWait (read once by srun): KillWait less 10% (at least 2 s), 1..60 s. On
# the test cluster (KillWait=5) that is 3 s: workers that ignore SIGTERM after
# rank 3's failure get SIGKILL then, and srun returns within the grace plus
# three seconds of rank 3's exit (timed from the exit, which the worker
# records: the steps' start-up on a loaded CI machine is not what is tested).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
kill_wait=$(scontrol show config | sed -n 's/^KillWait *= *\([0-9]*\) sec.*/\1/p')
[[ -n $kill_wait ]] || fail "cannot read KillWait from scontrol show config"
grace_ms=$("$PYTHON" -c "import sys; k = int(sys.argv[1]) * 1000; print(min(60000, max(1000, k - max(2000, k // 10))))" "$kill_wait")

mkdir -p "$WORK/ready"
run env READY_DIR="$WORK/ready" srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/stop/worker.py" ignore
ended=$(date +%s.%N)
[[ -s $WORK/ready/failed_at ]] || fail "rank 3 left no failed_at: did it exit as planned?"
took=$("$PYTHON" -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.1f}')" "$ended" "$(cat "$WORK/ready/failed_at")")
expect_rc 7 "rank 3 exits 7 while the others ignore SIGTERM"
expect_in "$ERR" "stop grace $grace_ms ms" "KillWait=$kill_wait s gives a grace of $grace_ms ms"
expect_in "$ERR" "still running after the $grace_ms ms grace: SIGKILL" "SIGKILL at the end of the grace"
expect_in "$ERR" "root cause: worker rank 3 (local rank 1) on node 1" "the root cause is rank 3"
"$PYTHON" -c "import sys; sys.exit(not float(sys.argv[1]) <= $grace_ms / 1000 + 3)" "$took" ||
  fail "srun returned $took s after rank 3's exit: more than the grace plus three seconds"
pass "KillWait=$kill_wait s: stop grace $grace_ms ms, SIGKILL then, srun back $took s after rank 3's exit"
