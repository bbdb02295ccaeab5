#!/usr/bin/env bash
# The step's rendezvous secret (SLURM_DDP_SECRET, made by srun, read by the
# agents) is written nowhere: not in slurmd's or slurmctld's log at their most
# verbose, not in what the user sees with srun -vv --ddp-verbose, not in the
# cluster's state and spool files; and the workers do not get it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
conf=$SLURM_CONF
saved_conf=$(cat "$conf")
restore() {
  printf '%s\n' "$saved_conf" >"$conf"
  scontrol reconfigure >/dev/null 2>&1 || true
  cleanup_work
}
trap restore EXIT

# Every daemon at debug5 (slurmd passes its level on to slurmstepd).
sed -i 's/^SlurmdDebug=.*/SlurmdDebug=debug5/; s/^SlurmctldDebug=.*/SlurmctldDebug=debug5/' "$conf"
scontrol reconfigure || fail "scontrol reconfigure"
deadline=$((SECONDS + 30))
until [[ $(sinfo -h -N -o '%T' | sort -u) == idle ]]; do
  ((SECONDS < deadline)) || fail "nodes not idle after reconfigure"
  sleep 0.3
done
lines_before=$(cat "$CLUSTER_DIR"/log/slurmd-*.log | wc -l)

bg_srun job -vv -N2 --ddp=cpu --ddp-procs=1 --ddp-verbose /bin/sh -c 'sleep 4; echo done'
secrets='' deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  secrets=$(for pid in $(node_processes ddp-agent); do
    tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^SLURM_DDP_SECRET=//p'
  done | sort -u)
  workers=$(node_processes '^/bin/sh -c sleep 4')
  [[ -n $secrets && $(wc -w <<<"$workers") == 2 ]] && break
  sleep 0.2
done
[[ -n $secrets ]] || fail "control: no agent with SLURM_DDP_SECRET in its environment"
expect_eq "$(wc -l <<<"$secrets")" "1" "one secret for the step's agents"
secret=$secrets
[[ $secret =~ ^[0-9a-f]{64}$ ]] || fail "the secret is not 32 random bytes in hex: '$secret'"
for pid in $workers; do
  ! tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^SLURM_DDP_SECRET=' || fail "worker $pid has the agents' secret"
done
wait_exit "$BG_PID" 60
expect_rc 0 "the step"
expect_eq "$(sed 's/^\[rank [0-9]*\] //' "$WORK/job.out" | sort -u)" "done" "both workers ran"

# The control: the daemons did log at debug level during the step.
lines_after=$(cat "$CLUSTER_DIR"/log/slurmd-*.log | wc -l)
debug_lines=$(cat "$CLUSTER_DIR"/log/slurmd-*.log | tail -n $((lines_after - lines_before)) | grep -c 'debug[2-5]:' || true)
((debug_lines > 100)) || fail "control: only $debug_lines debug lines in slurmd's logs during the step"

leaks=$(grep -rlF "$secret" "$CLUSTER_DIR" "$WORK" 2>/dev/null || true)
[[ -z $leaks ]] || fail "the rendezvous secret is written in: $leaks"

# Task shape (no agents): the tasks are the workers, and do not get it either.
run srun -N1 -n2 --ddp=cpu /bin/sh -c 'echo "secret=${SLURM_DDP_SECRET:-none}"'
expect_rc 0 "task shape"
expect_eq "$(sort -u <<<"$OUT")" "secret=none" "task-shape workers have no SLURM_DDP_SECRET"
pass "the rendezvous secret is in no log, output or state file, and no worker has it"
