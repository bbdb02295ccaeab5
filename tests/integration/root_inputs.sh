#!/usr/bin/env bash
# What a user hands the plugin where it runs as root (slurmstepd) is bounded
# before any parser sees it (spank/SECURITY.md): a value over its bound fails
# that user's step with one message naming the value and the bound, and never
# ends a daemon or drains a node. Oversized node lists and variables come from
# a stand-in for a user's own srun build (spank_forged_env.c); Slurm 22.05's
# own hostlist parser calls fatal() at 262,145 ranges.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

forged() {  # forged NAME:KIND: a --ddp step with that variable forged on every node
  run env DDP_TEST_FORGE="$1" SDDP_PORT=29500 srun -N2 --ddp=cpu sh -c 'echo worker ran'
  expect_failure "a --ddp step with $1"
  expect_not_in "$OUT" "worker ran" "nothing ran with $1"
}

forged SLURM_STEP_NODELIST:ranges
expect_in "$ERR" "ddp: the node list 'n[1,1,1," "the node list named"
expect_in "$ERR" "has 262145 ranges, more than the 65536 nodes a step can have" "ranges bounded before Slurm parses"

forged SLURM_STEP_NODELIST:groups
expect_in "$ERR" "ddp: the node list 'x[0-1999]x[0-1999]x[0-1999]' has a name with more than one [...] group" \
  "bracket groups bounded before Slurm multiplies them"

forged SLURM_STEP_NODELIST:long
expect_in "$ERR" "ddp: SLURM_STEP_NODELIST in the job's environment is longer than 1048576 bytes" "a long node list"

forged SDDP_PORT:long
expect_in "$ERR" "ddp: SDDP_PORT in the job's environment is longer than 65536 bytes" "a long SDDP_* variable"
expect_eq "$(grep -c "longer than" <<<"$ERR")" "1" "said once for the step"

forged SLURM_STEP_TASKS_PER_NODE:long
expect_in "$ERR" "ddp: SLURM_STEP_TASKS_PER_NODE in the job's environment is longer than 65536 bytes" \
  "a long Slurm variable"

# An option's value: srun says it before anything is allocated.
run srun -N1 --ddp=cpu --ddp-port="$(printf '1%.0s' {1..5000})" true
expect_failure "an option value over its bound"
expect_in "$ERR" "ddp: --ddp-port: the value is 5000 bytes long, more than the 4096 a --ddp option takes" \
  "the option and its bound named"

# Both slurmds still answer, no node is drained, and a step runs.
for i in 0 1; do
  pgrep -f "slurmd .*-N $CLUSTER_NAME-n$i" >/dev/null || fail "slurmd of node $i is gone"
done
expect_eq "$(sinfo -h -N -o '%T' | sort -u)" "idle" "no node drained"
run srun -N2 --ddp=cpu sh -c 'echo "rank=$RANK"'
expect_rc 0 "a --ddp step after all of it"
expect_eq "$(grep -c '^rank=' <<<"$OUT")" "2" "both nodes ran a worker"
pass "user input read as root is bounded: messages name the value and its bound; daemons alive, nodes idle"
