#!/usr/bin/env bash
# Worker output: "[rank R] " prefixes by default, SDDP_NO_PREFIX=1 turns them
# off, SDDP_OUTPUT_RANKS filters the terminal, SDDP_LOG_DIR keeps every rank's
# output in files.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
script='echo "out of $RANK"; echo "err of $RANK" >&2'

run srun -N2 --ddp=cpu --ddp-procs=2 /bin/sh -c "$script"
expect_rc 0 "prefixed run"
for r in 0 1 2 3; do
  expect_in "$RAW_OUT" "[rank $r] out of $r" "stdout of rank $r prefixed"
  expect_in "$RAW_ERR" "[rank $r] err of $r" "stderr of rank $r prefixed, on stderr"
done

run env SDDP_NO_PREFIX=1 srun -N1 --ddp=cpu /bin/sh -c "$script"
expect_eq "$RAW_OUT" "out of 0" "no prefix with SDDP_NO_PREFIX=1"

logs=$WORK/logs
run env SDDP_OUTPUT_RANKS=0,3 SDDP_LOG_DIR="$logs" srun -N2 --ddp=cpu --ddp-procs=2 /bin/sh -c "$script"
expect_rc 0 "filtered run"
expect_eq "$(grep -c 'out of' <<<"$RAW_OUT")" "2" "only ranks 0 and 3 on the terminal"
expect_in "$RAW_OUT" "[rank 3] out of 3" "rank 3 shown"
expect_not_in "$RAW_OUT" "out of 1" "rank 1 filtered"
expect_eq "$(cat "$logs/rank-1.out")" "out of 1" "rank 1's stdout in its log file"
expect_eq "$(cat "$logs/rank-2.err")" "err of 2" "rank 2's stderr in its log file"
pass "worker output: prefixes, filter, log files"
