#!/usr/bin/env bash
# What slurmstepd does after task_init reaches the workers of a --ddp step:
# on a cluster whose slurm.conf has a TaskProlog (it exports
# DDP_TEST_TASK_PROLOG=ran) and whose plugstack.conf lists a second SPANK
# plugin after ours (its task_init sets DDP_TEST_SECOND_PLUGIN=ran), with
# `srun --propagate=STACK` and a stack limit set before srun.
#
# Slurm 23.11 and later: the agent is prepended to the task's command
# (spank_prepend_task_argv), so every worker sees all three. Slurm 22.05 and
# 23.02: the plugin execs the agent from its task_init, before slurmstepd gets
# to any of them, and no worker sees them; that is the documented limit of
# those releases, asserted here so that a change in either direction shows.
# A plain step (no --ddp) sees all three on every release: the harness works.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

release=$(srun --version | sed -n 's/^slurm[^0-9]*\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"$release"
[[ -n $major && -n $minor ]] || fail "cannot read Slurm's release from: $(srun --version)"
prepends=0
((major > 23 || (major == 23 && minor >= 11))) && prepends=1

# The stack limit is the one thing set before srun; the rest comes from Slurm.
probe='echo "probe prolog=${DDP_TEST_TASK_PROLOG:-none} second=${DDP_TEST_SECOND_PLUGIN:-none} stack=$(ulimit -s)"'
limit=3000
[[ $(ulimit -s) != "$limit" ]] || limit=3100

# --- the harness: a plain step ------------------------------------------------
run bash -c "ulimit -s $limit && srun -N2 --propagate=STACK sh -c '$probe'"
expect_rc 0 "plain srun"
expect_eq "$(grep -c "^probe prolog=ran second=ran stack=$limit\$" <<<"$OUT")" "2" \
  "both tasks of a plain step see the TaskProlog, the second plugin and the stack limit"

# --- a --ddp step (agent shape: 2 nodes x 2 workers) ----------------------------
run bash -c "ulimit -s $limit && srun -N2 --ddp=cpu --ddp-procs=2 --propagate=STACK sh -c '$probe'"
expect_rc 0 "srun --ddp"
expect_eq "$(grep -c '^probe ' <<<"$OUT")" "4" "four workers answered"
if ((prepends)); then
  expect_eq "$(grep -c "^probe prolog=ran second=ran stack=$limit\$" <<<"$OUT")" "4" \
    "Slurm $major.$minor: every worker sees the TaskProlog's export, the second plugin's task_init and the stack limit"
  pass "Slurm $major.$minor prepends the agent: TaskProlog, later plugins and resource limits reach every worker"
else
  expect_eq "$(grep -c '^probe prolog=none second=none ' <<<"$OUT")" "4" \
    "Slurm $major.$minor (exec path): no worker sees the TaskProlog or the second plugin"
  expect_eq "$(grep -c "stack=$limit\$" <<<"$OUT")" "0" \
    "Slurm $major.$minor (exec path): the propagated stack limit does not reach the workers"
  pass "Slurm $major.$minor execs the agent from task_init: TaskProlog, later plugins and resource limits are skipped, as documented"
fi
