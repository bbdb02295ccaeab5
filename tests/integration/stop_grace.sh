#!/usr/bin/env bash
# Without StopGrace in the site config, the agents' grace follows Slurm's
# KillWait (read once by srun): KillWait less 10% (at least 2 s), 1..60 s. On
# the test cluster (KillWait=5) that is 3 s: workers that ignore SIGTERM after
# rank 3's failure get SIGKILL then, and srun returns within the grace plus
# two seconds.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
kill_wait=$(scontrol show config | sed -n 's/^KillWait *= *\([0-9]*\) sec.*/\1/p')
[[ -n $kill_wait ]] || fail "cannot read KillWait from scontrol show config"
grace_ms=$("$PYTHON" -c "import sys; k = int(sys.argv[1]) * 1000; print(min(60000, max(1000, k - max(2000, k // 10))))" "$kill_wait")

start=$(date +%s.%N)
mkdir -p "$WORK/ready"
run env READY_DIR="$WORK/ready" srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/stop/worker.py" ignore
took=$("$PYTHON" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$start")
expect_rc 7 "rank 3 exits 7 while the others ignore SIGTERM"
expect_in "$ERR" "stop grace $grace_ms ms" "KillWait=$kill_wait s gives a grace of $grace_ms ms"
expect_in "$ERR" "still running after the $grace_ms ms grace: SIGKILL" "SIGKILL at the end of the grace"
expect_in "$ERR" "root cause: worker rank 3 (local rank 1) on node 1" "the root cause is rank 3"
"$PYTHON" -c "import sys; sys.exit(not float(sys.argv[1]) <= 2 + 2 + $grace_ms / 1000 + 2)" "$took" ||
  fail "srun took $took s: more than the grace plus two seconds after rank 3's exit"
pass "KillWait=$kill_wait s: stop grace $grace_ms ms, SIGKILL then, srun back in $took s"
