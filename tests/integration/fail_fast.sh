#!/usr/bin/env bash
# Job-wide fail-fast on 3 nodes: a worker killed on node 2 stops every worker on
# every node and names the root cause; SIGUSR1 reaches every worker and the run
# goes on; scancel is named as Slurm's stop, whatever fields the job's name
# forges, and leaves no process behind on any node.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
sleeper="$DDP_SOURCE_DIR/tests/integration/fixtures/sleeper.py"

# --- kill -9 of one worker on node 2 ------------------------------------------
bg_srun kill -N3 --ddp=cpu --ddp-procs=2 "$PYTHON" "$sleeper" 120
wait_lines "$WORK/kill.out" "ready rank=" 6 60
victim=$(sed -n 's/.*ready rank=5 pid=\([0-9]*\).*/\1/p' "$WORK/kill.out")
[[ -n $victim ]] || fail "no pid for rank 5"
kill -KILL "$victim"
# "Within a few seconds": the bound is generous so a slow CI machine does not
# fail it; a hang (the workers sleep 120 s) does.
wait_exit "$BG_PID" 30
OUT=$(cat "$WORK/kill.out") ERR=$(cat "$WORK/kill.err")
expect_failure "srun after kill -9 of rank 5"
expect_eq "$RC" "137" "srun's exit code is the killed worker's (128 + SIGKILL)"
expect_in "$ERR" "root cause: worker rank 5 (local rank 1) on node 2" "root cause names the rank and node"
expect_in "$ERR" "was killed by SIGKILL" "root cause names the signal"
expect_in "$ERR" "class killed: " "a SIGKILL from outside is classed so"
expect_eq "$(grep -c 'root cause:' <<<"$ERR")" "1" "one root cause for the job"
expect_eq "$(node_processes "$sleeper" | wc -l)" "0" "no worker left on any node"

# --- SIGUSR1 is forwarded, the run goes on -----------------------------------
bg_srun usr1 -N3 --ddp=cpu --ddp-procs=2 "$PYTHON" "$sleeper" 6
wait_lines "$WORK/usr1.out" "ready rank=" 6 60
job=$(squeue -h -o '%i' | head -n 1)
scancel --signal=USR1 "$job"
wait_exit "$BG_PID" 60
OUT=$(sed 's/^\[rank [0-9]*\] //' "$WORK/usr1.out") ERR=$(cat "$WORK/usr1.err")
expect_rc 0 "the run after SIGUSR1"
expect_eq "$(grep -c 'got SIGUSR1' <<<"$OUT")" "6" "every worker got SIGUSR1"

# --- scancel: nothing left on any node ----------------------------------------
# The job's name carries the text of the fields node 0 reads, before the real
# ones in `scontrol show job -o`'s line: node 0 believes only Slurm's.
forged='x JobState=RUNNING Reason=TimeLimit EndTime=2030-01-01T00:00:00 PreemptTime=2026-01-01T00:00:00'
bg_srun cancel -N3 -J "$forged" --ddp=cpu --ddp-procs=2 "$PYTHON" "$sleeper" 120
wait_lines "$WORK/cancel.out" "ready rank=" 6 60
job=$(squeue -h -o '%i' | head -n 1)
scancel "$job"
wait_exit "$BG_PID" 30
ERR=$(cat "$WORK/cancel.err")
expect_in "$ERR" "root cause: Slurm stopped the job (SIGTERM; JobState=" "node 0 asked slurmctld why the step ended"
expect_in "$ERR" "it was cancelled (scancel)" "scancel is named, not the forged name's time limit"
expect_in "$ERR" "class slurm_stop: " "Slurm's stop is its own class"
deadline=$((SECONDS + 15))
while [[ -n $(node_processes "$sleeper") ]] && ((SECONDS < deadline)); do sleep 0.2; done
expect_eq "$(node_processes "$sleeper" | wc -l)" "0" "no worker left after scancel"
expect_eq "$(node_processes ddp-agent | wc -l)" "0" "no agent left after scancel"
pass "fail-fast across nodes, SIGUSR1 forwarding, clean scancel"
