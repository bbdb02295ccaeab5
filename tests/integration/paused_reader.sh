#!/usr/bin/env bash
# A reader that pauses, as the field makes one: `srun ... | less` before
# paging, Ctrl-S, a slow ssh link. srun's stdout goes into a pipe nobody reads
# for 20 s while 2 nodes x 2 workers print 200,000 lines each (more than
# slurmstepd and srun buffer). The agents must neither block nor drop: every
# line arrives, srun ends with 0, no node is declared lost (their heartbeats
# go on), each node says once that its output was held, and with
# --ddp-hang-timeout=5 no worker blocked on its own output is called a hang.
# (An agent whose loop blocked on the full pipe would have node 0 declared
# lost, srun end 1, and about half the lines lost.)
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
printer=$DDP_SOURCE_DIR/tests/integration/paused_reader/printer.py

# paused_run NAME SRUN_ARGS...: srun's stdout into a reader that sleeps 20 s
# first; its lines in $WORK/NAME.out, stderr in $WORK/NAME.err, srun's code in RC.
paused_run() {
  local name=$1; shift
  set +e
  timeout 150 srun "$@" 2>"$WORK/$name.err" | { sleep 20; cat; } >"$WORK/$name.out"
  RC=${PIPESTATUS[0]}
  set -e
  OUT=$(tail -n 3 "$WORK/$name.out") ERR=$(cat "$WORK/$name.err")
}

export LINES=200000
paused_run plain -N2 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=5 "$PYTHON" "$printer"
expect_rc 0 "srun with a reader paused for 20 s"
lines=$(grep -c ' line ' "$WORK/plain.out" || true)
if [[ $lines != 800000 ]]; then  # what went wrong: mangled lines, and where each rank stopped
  echo "--- lines not of the form '[rank R] rank R line I' (first 5):" >&2
  grep -v -E '^\[rank ([0-3])\] rank \1 line [0-9]+$' "$WORK/plain.out" | head -n 5 | cut -c1-300 >&2 || true
  for rank in 0 1 2 3; do echo "rank $rank's last: $(grep "^\[rank $rank\]" "$WORK/plain.out" | tail -n 1)" >&2; done
fi
expect_eq "$lines" "800000" "every line of the 4 workers arrived"
for rank in 0 1 2 3; do
  expect_eq "$(grep -c "^\[rank $rank\] rank $rank line " "$WORK/plain.out" || true)" "$LINES" "rank $rank's lines"
done
expect_not_in "$ERR" "was lost" "no node is declared lost and no output is lost"
expect_not_in "$ERR" "hung" "no worker blocked on its output is blamed for a hang (--ddp-hang-timeout=5)"
expect_in "$ERR" "output is held: the reader of this job's output has taken nothing" "the output says it was held"
for node in 0 1; do
  held=$(grep -c "node $node: output is held" <<<"$ERR" || true)
  ((held <= 1)) || fail "node $node said $held times that its output was held, not once"
done
pass "a reader paused for 20 s: $lines lines delivered, srun 0, nothing lost, no hang blamed"
