#!/usr/bin/env bash
# Stopping is a state of the agents' event loop, not a blocking wait: on a
# cluster whose site config sets StopGrace=12 (longer than the 5 s heartbeat
# timeout), 2 nodes x 2 workers, rank 3 exits 7 after 2 s.
#  - The other ranks "write a checkpoint" on SIGTERM for 10 s, a line every
#    0.5 s: every line reaches srun's output, no node is declared lost (node 0
#    keeps sending heartbeats while it waits), the root cause is rank 3, and
#    srun exits 7.
#  - The other ranks ignore SIGTERM: SIGKILL at the end of the grace, the same
#    root cause, and srun returns within the grace plus two seconds of rank 3's
#    exit.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
worker="$PYTHON $DDP_SOURCE_DIR/tests/integration/stop/worker.py"
grace=12

mkdir -p "$WORK/r1"
run env READY_DIR="$WORK/r1" srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose $worker checkpoint 10
expect_rc 7 "rank 3 exits 7 while the others checkpoint"
expect_in "$ERR" "stop grace ${grace}000 ms" "the plan shows the site's StopGrace"
expect_in "$ERR" "root cause: worker rank 3 (local rank 1) on node 1" "the root cause is the first failure"
expect_in "$ERR" "exited with code 7" "the root cause says how rank 3 ended"
expect_not_in "$ERR" "no heartbeat" "no node is declared lost while node 0 waits for its workers"
expect_not_in "$ERR" "SIGKILL" "the checkpoints finish within the grace"
for rank in 0 1 2; do
  expect_eq "$(grep -c "^rank $rank checkpoint line " <<<"$OUT")" "20" "rank $rank: every checkpoint line reaches the output"
  expect_in "$OUT" "rank $rank checkpoint done" "rank $rank finished its checkpoint"
done

start=$(date +%s.%N)
mkdir -p "$WORK/r2"
run env READY_DIR="$WORK/r2" srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose $worker ignore
took=$("$PYTHON" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$start")
expect_rc 7 "rank 3 exits 7 while the others ignore SIGTERM"
expect_in "$ERR" "root cause: worker rank 3 (local rank 1) on node 1" "the root cause is the first failure"
expect_in "$ERR" "still running after the ${grace}000 ms grace: SIGKILL" "workers that ignore SIGTERM get SIGKILL at the grace's end"
expect_not_in "$ERR" "no heartbeat" "no node is declared lost"
# Launch (about 1 s here) + rank 3's 2 s + the grace + 2 s.
"$PYTHON" -c "import sys; sys.exit(not float(sys.argv[1]) <= 2 + 2 + $grace + 2)" "$took" ||
  fail "srun took $took s: more than the grace plus two seconds after rank 3's exit"
pass "the agents keep serving while they stop: checkpoint lines all arrive, no node lost, root cause rank 3; SIGKILL at the ${grace} s grace, srun back in $took s"
