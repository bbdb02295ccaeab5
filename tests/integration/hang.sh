#!/usr/bin/env bash
# --ddp-hang-timeout: rank 2 of 4 falls asleep inside a loop of all-reduces
# (tests/integration/hang/worker.py), the other ranks wait in the all-reduce
# it never joins. Every rank stalls within a step of the others: the job stops
# within the timeout plus a few seconds, the root cause names rank 2 on node 1
# (its faulthandler stack is outside torch.distributed, the others' inside;
# the coordinator compares node 0's and node 1's reports), and rank 2's
# Python stack is in the output. Then the same with ddp-agent
# alone (SDDP_HANG_TIMEOUT), and a script that never signals progress.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
agent=${1:?path to ddp-agent}
train=${2:?path to ddp-train}
worker=$DDP_SOURCE_DIR/tests/integration/hang/worker.py
timeout_s=5

run srun -N2 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=$timeout_s "$PYTHON" "$worker"
expect_rc 134 "the stalled rank is killed by SIGABRT for its stack: 128 + 6"
asleep=$(sed -n 's/.*rank 2 falls asleep at step 20 at \([0-9.]*\).*/\1/p' <<<"$OUT")
[[ -n $asleep ]] || { show srun; fail "rank 2 never said it fell asleep"; }
ended=$(date +%s.%N)
expect_in "$ERR" "root cause: worker rank 2 (local rank 0) on node 1" "the root cause names rank 2 on node 1"
expect_in "$ERR" "hung: no progress for $timeout_s s (--ddp-hang-timeout; its stack is outside any collective" \
  "the root cause says it is a hang, told apart from the waiting ranks by its stack"
expect_in "$ERR" "stalled as well (they waited for it): node 0: ranks 0,1" "node 0's ranks are named as waiting"
# faulthandler's dump of rank 2's main thread, in its output and in the root cause's tail.
expect_in "$RAW_ERR" "[rank 2] " "rank 2's stderr is there"
grep -q '^\[rank 2\] .*in fall_asleep' <<<"$RAW_ERR" || { show srun; fail "rank 2's stack (fall_asleep) is not in the output"; }
expect_in "$ERR" "| Fatal Python error: Aborted" "the root cause's tail holds rank 2's faulthandler dump"
took=$("$PYTHON" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$asleep" "$ended")
"$PYTHON" -c "import sys; sys.exit(not float(sys.argv[1]) <= $timeout_s + 10)" "$took" ||
  fail "the job ended $took s after rank 2 fell asleep: more than the timeout plus 10 s"
pass "srun --ddp-hang-timeout=$timeout_s: rank 2 named with its stack, srun back $took s after it fell asleep"

# ddp-agent alone (like torchrun --standalone): the same hang on one node.
run env SDDP_HANG_TIMEOUT=3 HANG_RANK=1 "$agent" --nproc 3 -- "$PYTHON" "$worker"
expect_rc 134 "standalone: SIGABRT"
expect_in "$ERR" "root cause: worker rank 1 (local rank 1) on node 0" "standalone: rank 1 named"
expect_in "$ERR" "stalled on node 0: ranks " "standalone: the stalled ranks are listed"
expect_in "$ERR" "its stack is outside any collective, where the others wait" "standalone: told apart by its stack"
grep -q '^\[rank 1\] .*in fall_asleep' <<<"$RAW_ERR" || { show agent; fail "standalone: rank 1's stack is not in the output"; }
pass "ddp-agent SDDP_HANG_TIMEOUT=3: rank 1 named with its stack"

# A script that never touches its progress file is not stopped (the watch
# starts at a worker's first touch: a long start is no hang) but told how.
run srun -N1 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=2 "$PYTHON" -c "import time; time.sleep(4)"
expect_rc 0 "a script without a progress signal runs to its end"
expect_in "$ERR" "--ddp-hang-timeout=2 s watched nothing: no worker touched its DDP_PROGRESS_FILE" "it is told"
expect_in "$ERR" 'if p := os.environ.get("DDP_PROGRESS_FILE"): pathlib.Path(p).touch()' "and the one line to add"
pass "a script without a progress signal is told the line to add"

# ddp-train signals progress each step by itself: a run several times the
# timeout long, with a start (data, Gloo) longer than it, is no hang.
run srun -N1 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=1 "$train" --data /usr/share/datasets/fashion-mnist \
  --model ae --epochs 3
expect_rc 0 "ddp-train under a 1 s hang timeout"
expect_not_in "$ERR" "DDP_PROGRESS_FILE" "ddp-train touches its progress file"
pass "ddp-train signals its progress every step"

# ddp-train has no Python stack: the step number in its progress file tells
# the coordinator which rank is behind. Rank 2 (node 1) stops at step 30.
run srun -N2 --ddp=cpu --ddp-procs=2 --ddp-hang-timeout=3 "$train" --data /usr/share/datasets/fashion-mnist \
  --epochs 2 --stall-at-step 30 --crash-rank 2
expect_rc 134 "ddp-train stalled: SIGABRT"
expect_in "$ERR" "fault injection: rank 2 stops making progress at step 30" "rank 2 stalled"
expect_in "$ERR" "root cause: worker rank 2 (local rank 0) on node 1" "the root cause names rank 2 on node 1"
expect_in "$ERR" "at step 29 in its DDP_PROGRESS_FILE, the furthest behind" "by the step it had reached"
pass "ddp-train: the rank behind is named by its step"

# Under Slurm srun's option wins over the job's SDDP_HANG_TIMEOUT, in the
# agent too: 0 turns the watch off for this step.
run env SDDP_HANG_TIMEOUT=1 srun -N1 --ddp=cpu --ddp-hang-timeout=0 "$PYTHON" -c \
  "import os, pathlib, time; pathlib.Path(os.environ.get('DDP_PROGRESS_FILE', '/dev/null')).touch(); time.sleep(3)"
expect_rc 0 "--ddp-hang-timeout=0 wins over SDDP_HANG_TIMEOUT=1"
# Under Slurm the agent reads no hang variable: the plan has the plugin's choice.
run env SDDP_HANG_TIMEOUT=abc DDP_HANG_TIMEOUT=abc srun -N1 --ddp=cpu --ddp-hang-timeout=0 true
expect_rc 0 "the agent under Slurm ignores SDDP_HANG_TIMEOUT=abc and DDP_HANG_TIMEOUT=abc"
pass "srun's --ddp-hang-timeout wins over the job's SDDP_HANG_TIMEOUT; the agent reads neither variable"

# Bad values: one clear message each.
run srun -N1 --ddp=cpu --ddp-hang-timeout=soon true
expect_failure "a non-numeric hang timeout"
expect_in "$ERR" "--ddp-hang-timeout" "the message names the option"
pass "bad --ddp-hang-timeout refused"

# The task shape has no agent to watch: refused, not silently ignored
# (integration.task_shape has the other agent-only options).
run srun -N1 -n2 --ddp=cpu --ddp-hang-timeout=5 true
expect_failure "--ddp-hang-timeout in the task shape"
expect_in "$ERR" "--ddp-hang-timeout needs one task per node" "the refusal says why"
pass "task shape: --ddp-hang-timeout refused with the fix"
