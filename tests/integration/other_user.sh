#!/usr/bin/env bash
# Another user on the step's nodes (a real account, useradd), as on a shared
# cluster where several users' jobs share a node:
#   1. before the step starts (sbatch --hold, then released), it binds node
#      0's first rendezvous candidate (computed from the job id and PortRange,
#      as anyone can) and answers the agents as a rendezvous of the step
#      would, up to a REFUSED without node 0's proof: the agents pass it by,
#      the step meets at the next port and ends 0;
#   2. the same port, relaying each agent's handshake to node 0's real port
#      and adding lines of its own (a forged `STOPPED unhealthy` toward node
#      0, a forged START toward the agent): node 0 refuses the relayed answer
#      (its proof names the squatted port) and says so, the agent passes the
#      unproven refusal by; the step ends 0, no node is taken out, nothing
#      reaches the site's BadNodeHook;
#   3. during --ddp-preflight=swap, it keeps 40 idle connections open to
#      node 1's check port of a 3-node step, hundreds of new ones a second:
#      no healthy node is named, the run ends 0.
# Each part fails on slurm-ddp 0.3.0: the refusal or the forged START ends
# node 1's agent and the step waits out the rendezvous timeout; the flood
# evicts node 0's transfer and node 1 is taken out.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
script=$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py
mallory=ddp-mallory
id -u "$mallory" >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$mallory"
site_conf=/etc/slurm/ddp.conf
[[ ! -e $site_conf ]] || fail "$site_conf exists: this test makes its own (BadNodeHook=); move it away"
hook_dir=$(mktemp -d /run/ddp-hook-XXXXXX)  # root's, 0700, in a root-only directory (the hook rule)
printf '#!/bin/sh\necho "$DDP_BAD_NODE" >>"%s/reported"\n' "$hook_dir" >"$hook_dir/hook"
chmod 755 "$hook_dir/hook"
echo "BadNodeHook=$hook_dir/hook" >"$site_conf"
bg_pids=()
cleanup() {
  ((${#bg_pids[@]} == 0)) || kill "${bg_pids[@]}" 2>/dev/null || true
  pkill -u "$mallory" 2>/dev/null || true
  rm -rf "$hook_dir" "$site_conf"
  cleanup_work
}
trap cleanup EXIT
# The other user's copy of the peer (the checkout may sit below a private directory).
chmod 755 "$WORK"
install -m 0755 "$DDP_SOURCE_DIR/tests/integration/rdzv_peer.py" "$WORK/peer.py"
as_mallory_on() {  # as_mallory_on NODE ARGS...: the peer, as the other user, in node NODE's network
  local node=$1; shift
  nsenter --net="/var/run/netns/sddp-$CLUSTER_NAME-n$node" runuser -u "$mallory" -- "$PYTHON" "$WORK/peer.py" "$@"
}
wait_ready() { wait_lines "$1" "^ready" 1 10 || fail "the other user's process did not start: $(cat "$1")"; }

# The first rendezvous candidate of step 0 of job $1, as anybody can compute
# it from the job id and the PortRange of the world-readable ddp.conf (the
# default here): common/ddp/plan/ports.cpp.
first_candidate() {
  "$PYTHON" -c 'import sys; job, step, first, last = map(int, sys.argv[1:]); span = last - first + 1
print(first + (job * 2654435761 % span + (step + 1) * 64 % span) % span)' "$1" 0 20000 29999
}

nodes="$CLUSTER_NAME-n0,$CLUSTER_NAME-n1"
addr0=$(node_addr "$CLUSTER_NAME-n0")
for mode in refuse relay; do
  job=$(sbatch --parsable --hold -N2 -w "$nodes" -o "$WORK/$mode.out" \
    --wrap "srun --ddp=cpu --ddp-verbose $PYTHON $script") || fail "sbatch refused the job"
  port=$(first_candidate "$job")
  to=$(for i in 1 2 3 4; do printf '%s:%s,' "$addr0" $((port + i)); done)
  as_mallory_on 0 squat "$port" "$job.0" --mode "$mode" --to "${to%,}" --seconds 40 >"$WORK/squat-$mode.log" 2>&1 &
  bg_pids+=($!)
  wait_ready "$WORK/squat-$mode.log"
  scontrol release "$job"
  deadline=$((SECONDS + 90))
  until [[ $(squeue -h -j "$job" 2>/dev/null) == "" ]] || ((SECONDS > deadline)); do sleep 0.3; done
  RC=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*ExitCode=\([0-9]*\):.*/\1/p')
  OUT=$(cat "$WORK/$mode.out") ERR=""
  kill "${bg_pids[-1]}" 2>/dev/null || true
  squat=$(cat "$WORK/squat-$mode.log")
  echo "--- the other user's $mode on port $port:"; echo "$squat"
  expect_in "$squat" "connection 1: " "an agent knocked at the squatted port first ($mode)"
  expect_rc 0 "the step, with another user squatting its first port ($mode)"
  expect_eq "$(grep -c 'sum=3 expected=3 OK$' <<<"$OUT")" "2" "both workers ran ($mode)"
  used=$(rdzv_port_from "$WORK/$mode.out")
  [[ -n $used && $used != "$port" ]] || { show "$mode"; fail "the rendezvous port: '$used' (squatted: $port)"; }
  expect_not_in "$OUT" "taken out" "no node taken out ($mode)"
  if [[ $mode == relay ]]; then
    expect_in "$squat" "relayed to $addr0:" "the other user relayed to node 0's real port"
    expect_in "$OUT" "it could not prove the step's secret for this port" "node 0 names the relayed answer"
  fi
done
sleep 1  # slurmstepd runs the hook as the step ends
[[ ! -e $hook_dir/reported ]] || fail "the BadNodeHook was run for: $(cat "$hook_dir/reported")"

# 3. Node 1's check port flooded during --ddp-preflight=swap, 3 nodes (fewer
# are not compared; were every transfer to fail, no node would be named).
as_mallory_on 1 checkflood --keep 40 --seconds 40 >"$WORK/flood.log" 2>&1 &
bg_pids+=($!)
wait_ready "$WORK/flood.log"
run srun -N3 --ddp=cpu --ddp-preflight=swap --ddp-verbose "$PYTHON" "$script"
wait "${bg_pids[-1]}" 2>/dev/null || true
floods=$(tail -n 1 "$WORK/flood.log")
echo "--- the other user's connections to node 1's check port: $floods"
expect_rc 0 "a run with --ddp-preflight=swap while another user floods the check ports"
expect_in "$ERR" "pre-flight network by node: 0=" "every transfer measured"
expect_not_in "$ERR" "pre-flight: node" "no healthy node named"
[[ $("$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["opened"])' "$floods") -ge 8 ]] ||
  fail "the flood opened fewer than 8 connections to the check port: $floods"
pass "another user squatting node 0's first rendezvous port (refusing, relaying with forged lines) and flooding a check port: the steps end 0, no node named or taken out"
