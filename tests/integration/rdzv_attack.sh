#!/usr/bin/env bash
# The rendezvous port of two running jobs under attack: malformed and oversized
# lines close only their own connection; a handshake made with job A's real
# secret is refused when replayed on a new connection of A or to job B, and
# from an agent of another protocol version, naming both versions; 100 idle
# connections are cut at the handshake timeout; both jobs end with 0 and the
# user's terminal gets a few summary lines, not one per stranger.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
sleeper="$DDP_SOURCE_DIR/tests/integration/fixtures/sleeper.py"
peer="$DDP_SOURCE_DIR/tests/integration/rdzv_peer.py"

bg_srun jobA -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose "$PYTHON" "$sleeper" 15
pid_a=$BG_PID
bg_srun jobB -N1 --ddp=cpu --ddp-procs=1 --ddp-verbose "$PYTHON" "$sleeper" 15
pid_b=$BG_PID
wait_lines "$WORK/jobA.out" "ready rank=" 4 90
wait_lines "$WORK/jobB.out" "ready rank=" 1 90
port_a=$(rdzv_port_from "$WORK/jobA.err") port_b=$(rdzv_port_from "$WORK/jobB.err")
[[ -n $port_a && -n $port_b ]] || fail "no rendezvous port in the verbose output"
run_a=$(sed -n 's/.*step \([0-9.]*\): .*/\1/p' "$WORK/jobA.err" | head -n 1)
run_b=$(sed -n 's/.*step \([0-9.]*\): .*/\1/p' "$WORK/jobB.err" | head -n 1)
# Where each job's node 0 is, and job A's secret (root may read the agent's environment).
agent_env() {  # agent_env RUN_ID NAME: NAME's value in the environment of node 0's agent of RUN_ID
  local pid env
  for pid in $(node_processes ddp-agent); do
    env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null) || continue
    grep -qx "DDP_PLAN_RUN_ID=$1" <<<"$env" && grep -qx "DDP_PLAN_NODE_RANK=0" <<<"$env" &&
      sed -n "s/^$2=//p" <<<"$env" && return 0
  done
  return 0
}
addr_a=$(agent_env "$run_a" DDP_PLAN_MASTER_ADDR) addr_b=$(agent_env "$run_b" DDP_PLAN_MASTER_ADDR)
secret_a=$(agent_env "$run_a" SLURM_DDP_SECRET)
[[ -n $addr_a && -n $addr_b && ${#secret_a} == 64 ]] || fail "cannot find node 0's agents of steps $run_a and $run_b"

# 1. Malformed and oversized lines, one connection each.
"$PYTHON" "$peer" malformed "$addr_a" "$port_a" >"$WORK/malformed.log" 2>&1 || { cat "$WORK/malformed.log" >&2; fail "the malformed-input client failed"; }
malformed=$(cat "$WORK/malformed.log")
for name in oversized-no-newline oversized-with-newline nul-byte crlf bad-escape unknown-verb join-before-auth \
  too-many-fields response-bad-fields empty-line; do
  expect_in "$malformed" "$name: closed" "$name closes that connection"
done
expect_in "$malformed" "response-before-challenge: REFUSED reason=authentication%20failed; closed" \
  "a RESPONSE sent before the challenge was read is refused"

# 2. Replays of a genuine handshake of job A's node 1.
"$PYTHON" "$peer" replay "$addr_a" "$port_a" "$secret_a" "$addr_b" "$port_b" 1 >"$WORK/replay.log" 2>&1 ||
  { cat "$WORK/replay.log" >&2; fail "the replay client failed"; }
replay=$(cat "$WORK/replay.log")
echo "$replay"
refused="REFUSED reason=authentication%20failed"
expect_in "$replay" "replayed-new-connection: $refused" "job A's handshake replayed on a new connection of A"
expect_in "$replay" "replayed-other-job: $refused" "job A's handshake replayed to job B"
expect_in "$replay" "other-secret-own-run: $refused" "job A's secret over job B's challenge"
expect_in "$replay" "other-secret-their-run: $refused" "job A's secret over job B's challenge, as B's step"
# The control: the same line where it was made verifies (only the node is taken).
expect_in "$replay" "genuine: REFUSED reason=node%201%20has%20already%20joined" "the captured handshake was genuine"
# The right secret, another protocol version: refused, naming both.
expect_in "$replay" "other-version: REFUSED reason=node%201%20%28from%20" "another version is refused"
# The version before this one: the refusal names it and ours.
previous=$(($(sed -n 's/.*kProtocolVersion = \([0-9]*\);.*/\1/p' "$DDP_SOURCE_DIR/common/ddp/wire/rdzv_messages.hpp") - 1))
expect_in "$replay" "%28rendezvous%20protocol%20${previous}%29%20but%20node%200%20runs%20slurm-ddp" \
  "the refusal names both versions"
expect_in "$replay" "protocol-3: REFUSED reason=node%201%20%28from%20" "an agent of protocol 3 is refused too"
expect_in "$replay" "runs%20slurm-ddp%20of%20an%20older%20release%20%28rendezvous%20protocol%203%29" \
  "an agent of protocol 3 named as such"

# 3. 100 idle connections to job A: cut at the handshake timeout (5 s) or shed.
"$PYTHON" "$peer" flood "$addr_a" "$port_a" --idle 100 --limit 40 >"$WORK/flood.json" 2>&1 ||
  { cat "$WORK/flood.json" >&2; fail "the flooder failed"; }
flood=$(tail -n 1 "$WORK/flood.json")
echo "100 idle connections to a running job: $flood"
expect_in "$flood" '"closed_by_server": 100,' "every idle connection is closed by node 0"
max_life=$("$PYTHON" -c 'import json,sys; print(int(json.loads(sys.argv[1])["max_life_s"]))' "$flood")
((max_life >= 4 && max_life <= 30)) || fail "idle connections lived up to $max_life s; the handshake timeout is 5 s"

wait_exit "$pid_a" 90
OUT=$(cat "$WORK/jobA.out") ERR=$(cat "$WORK/jobA.err")
expect_rc 0 "job A goes on"
expect_in "$ERR" "refused a connection from" "the refusal is logged"
expect_in "$ERR" "before it authenticated: protocol error" "a protocol error is logged"
expect_in "$ERR" "more connection(s) without the step's secret closed" "the rest is summarised"
lines=$(grep -c "rendezvous:" "$WORK/jobA.err" || true)
((lines <= 15)) || { show "job A"; fail "$lines rendezvous lines on the user's terminal for ~115 strangers"; }
wait_exit "$pid_b" 90
OUT=$(cat "$WORK/jobB.out") ERR=$(cat "$WORK/jobB.err")
expect_rc 0 "job B goes on"
expect_in "$ERR" "refused a connection from" "job B logs the replays it refused"
pass "malformed input, replays and idle connections refused; both jobs unaffected; $lines log lines"
