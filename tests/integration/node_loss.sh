#!/usr/bin/env bash
# A node cut off from the network (its veth down) is noticed within the
# heartbeat timeout (5 s by default): the other nodes stop their workers with a
# message naming the lost node, long before any Gloo/NCCL timeout.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
sleeper="$DDP_SOURCE_DIR/tests/integration/fixtures/sleeper.py"
veth=sddp${CLUSTER_NAME}2
restore_link() { ip link set "$veth" up 2>/dev/null || true; cleanup_work; }
trap restore_link EXIT

bg_srun cut -N3 --ddp=cpu --ddp-procs=2 "$PYTHON" "$sleeper" 120
wait_lines "$WORK/cut.out" "ready rank=" 6 60
ip link set "$veth" down
wait_lines "$WORK/cut.err" "node 2 .* was lost: no heartbeat" 1 30
# Nodes 0 and 1 have stopped their workers (ranks 0-3); node 2's agent stops its
# own when it misses node 0's heartbeats.
deadline=$((SECONDS + 20))
while [[ -n $(node_processes "$sleeper") ]] && ((SECONDS < deadline)); do sleep 0.2; done
expect_eq "$(node_processes "$sleeper" | wc -l)" "0" "every worker stopped, on both sides of the cut"
ip link set "$veth" up
wait_exit "$BG_PID" 60
ERR=$(cat "$WORK/cut.err")
expect_failure "srun after the cut"
expect_in "$ERR" "root cause: node 2 (" "the root cause names the lost node"
pass "a cut-off node is noticed within the heartbeat timeout"
