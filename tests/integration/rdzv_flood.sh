#!/usr/bin/env bash
# The rendezvous port flooded before the other nodes arrive, without Slurm:
# two ddp-agents on loopback with a 2-node plan (as bench/scale_sim.py runs
# them), node 0 started first, then hundreds of idle and slow (slowloris)
# connections from 127.0.0.2, and only then node 1 (from 127.0.0.1). Node 1
# must still join, the job end with 0, every stranger be closed by node 0
# (shed or timed out), and node 0's log stay a handful of lines. Then the
# same with a flood that never lets go, and with a low open-files limit.
# Last, streams as fast as the stranger can send, for 10 s, while the job
# runs: short lines (`yes | nc`) and bytes without a newline, a new connection
# each time one is closed. Node 0 must keep its heartbeats (no node lost), its
# peak memory (VmHWM) under 64 MiB, and the job end with 0. (Without the
# stranger budget, a line flood would grow node 0 to gigabytes in seconds,
# and its read loop starve the heartbeats: node 0 would be declared lost.)
#
#   rdzv_flood.sh AGENT SOURCE_DIR
set -euo pipefail
agent=${1:?path to ddp-agent}
src=${2:?source dir}
PY=/usr/bin/python3
peer="$src/tests/integration/rdzv_peer.py"
work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  if [[ -n ${KEEP_WORK:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
show() { local f; for f in "$@"; do echo "--- $f:" >&2; tail -n 40 "$f" >&2 || true; done; }
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
elapsed() { "$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

# start_node NAME RANK SECONDS [NOFILE]: one agent of the 2-node step, its pid
# in NODE_PID, output in $work/NAME.{out,err}; the worker sleeps SECONDS.
run=0
new_step() {
  run=$((run + 1))
  RDZV_PORT=$(free_port) MASTER_PORT=$(free_port)
  SECRET=$("$PY" -c 'import secrets; print(secrets.token_hex(32))')
}
start_node() {
  local name=$1 rank=$2 seconds=$3 nofile=${4:-}
  # In the sanitizer build (tests/sanitize.sh) the agent keeps the sanitizers'
  # options, so its reports go where the others' go, with ASan's quarantine
  # cut to 1 MiB: ASan holds freed memory back (256 MiB by default), and
  # VmHWM would count that as the agent's.
  local -a san=()
  [[ -z ${ASAN_OPTIONS:-} ]] || san+=("ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=1")
  [[ -z ${UBSAN_OPTIONS:-} ]] || san+=("UBSAN_OPTIONS=$UBSAN_OPTIONS")
  [[ -z ${LSAN_OPTIONS:-} ]] || san+=("LSAN_OPTIONS=$LSAN_OPTIONS")
  local -a env=(env -i "PATH=$PATH" "${san[@]}" "TMPDIR=$work" "SLURM_DDP_SECRET=$SECRET"
    DDP_PLAN_VERSION=5 DDP_PLAN_REQUEUE=0 DDP_PLAN_REQUEUE_WAIT_MS=60000 DDP_PLAN_HANG_TIMEOUT_MS=0 "DDP_PLAN_RUN_ID=$$.$run" DDP_PLAN_MODE=cpu "DDP_PLAN_NODE_RANK=$rank"
    DDP_PLAN_SPARES=0 DDP_PLAN_MIN_NODES=0 DDP_PLAN_GROUPS=2 "DDP_PLAN_GROUP_RANK=$rank" DDP_PLAN_HEALTH_CHECK= DDP_PLAN_HEALTH_CHECK_TIMEOUT_MS=60000
    DDP_PLAN_NNODES=2 DDP_PLAN_NPROC=1 "DDP_PLAN_RANK_BASE=$rank" DDP_PLAN_WORLD_SIZE=2
    DDP_PLAN_MASTER_ADDR=127.0.0.1 "DDP_PLAN_MASTER_PORT=$MASTER_PORT" DDP_PLAN_MASTER_PORT_FIXED=1
    DDP_PLAN_MAX_RESTARTS=0 DDP_PLAN_STOP_GRACE_MS=2000 DDP_PLAN_EXPORT_IB_HCA=0 "DDP_PLAN_JOB_ID=$$"
    "DDP_PLAN_STEP_ID=$run" DDP_PLAN_PORT_RANGE=20000-29999 "DDP_PLAN_RDZV_PORT=$RDZV_PORT"
    DDP_PLAN_MASTER_INTERFACE= DDP_PLAN_RDZV_TIMEOUT_MS=60000 DDP_PLAN_HEARTBEAT_TIMEOUT_MS=5000
    "DDP_PLAN_VERBOSE=$((rank == 0))")
  local cmd=("${env[@]}" "$agent" --plan-from-env -- /bin/sh -c "sleep $seconds; echo rank \$RANK done")
  if [[ -n $nofile ]]; then
    # soft and hard: the agent cannot raise it back
    (ulimit -n "$nofile" && exec "${cmd[@]}") >"$work/$name.out" 2>"$work/$name.err" &
  else
    "${cmd[@]}" >"$work/$name.out" 2>"$work/$name.err" &
  fi
  NODE_PID=$!
  pids+=("$NODE_PID")
}
wait_for() {  # wait_for FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || { show "$1"; fail "waited $3 s for '$2' in $1"; }
    sleep 0.1
  done
}
wait_rc() {  # wait_rc PID SECONDS: the exit code in RC
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { show "$work"/*.err; fail "process $1 still running after $2 s"; }
  set +e; wait "$1"; RC=$?; set -e
}
json() { "$PY" -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])[sys.argv[2]])" "$1" "$2"; }
# How many strangers node 0's log accounts for: one line each for the first
# few, then summaries with counts ("N more connection(s) ...").
accounted() {
  "$PY" - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
single = len(re.findall(r"rendezvous: (shed|dropped|refused|closed) ", text))
summed = sum(int(n) for n in re.findall(r"rendezvous: (\d+) more connection\(s\)", text))
print(single + summed)
PY
}
rdzv_lines() { grep -c 'rendezvous:' "$1" || true; }

# --- 1. No attack: the reference time ---------------------------------------
new_step
t0=$(now)
start_node base0 0 6
n0=$NODE_PID
wait_for "$work/base0.err" "rendezvous for 2 node(s) on port" 30
start_node base1 1 6
n1=$NODE_PID
wait_rc "$n1" 90; [[ $RC == 0 ]] || { show "$work"/base*.err; fail "no attack: node 1 exited $RC"; }
wait_rc "$n0" 30; [[ $RC == 0 ]] || { show "$work"/base*.err; fail "no attack: node 0 exited $RC"; }
base_s=$(elapsed "$t0" "$(now)")
echo "no attack: job took $base_s s (workers sleep 6 s)"

# attack NAME NOFILE FLOOD_ARGS...: node 0 starts (open-files limit NOFILE, ""
# for the default), the flooder opens its connections from 127.0.0.2, then node
# 1 starts; both must finish with rc 0 and node 1 must join within 20 s. Sets
# JOIN_S (node 1's start to the step's plan on node 0), JOB_S and FLOOD_RC.
attack() {
  local name=$1 nofile=$2 t0 t1 n0 n1 flood
  shift 2
  new_step
  t0=$(now)
  start_node "${name}0" 0 8 "$nofile"
  n0=$NODE_PID
  wait_for "$work/${name}0.err" "rendezvous for 2 node(s) on port" 30
  "$PY" "$peer" flood 127.0.0.1 "$RDZV_PORT" "$@" --source 127.0.0.2 --limit 60 \
    >"$work/$name.json" 2>"$work/$name-flood.err" &
  flood=$!
  pids+=("$flood")
  wait_for "$work/$name.json" "^ready" 60
  t1=$(now)
  start_node "${name}1" 1 8
  n1=$NODE_PID
  wait_for "$work/${name}0.err" "step $$.$run: attempt 0: 2 node(s)" 60
  JOIN_S=$(elapsed "$t1" "$(now)")
  wait_rc "$n1" 90; [[ $RC == 0 ]] || { show "$work/$name"[01].err; fail "$name: node 1 exited $RC"; }
  wait_rc "$n0" 30; [[ $RC == 0 ]] || { show "$work/$name"[01].err; fail "$name: node 0 exited $RC"; }
  JOB_S=$(elapsed "$t0" "$(now)")
  wait_rc "$flood" 90
  FLOOD_RC=$RC
  echo "$name: $(tail -n 1 "$work/$name.json"); node 1 joined $JOIN_S s after starting; job $JOB_S s"
  ((${JOIN_S%.*} < 20)) || fail "$name: node 1 took $JOIN_S s to join"
  grep -q "rank 0 done" "$work/${name}0.out" || fail "$name: node 0's worker did not run"
  grep -q "rank 1 done" "$work/${name}1.out" || fail "$name: node 1's worker did not run"
}

# --- 2. 400 idle + 20 slowloris connections, then node 1 -------------------------
attack slow "" --idle 400 --slow 20
[[ $FLOOD_RC == 0 ]] || { show "$work/slow-flood.err"; fail "the flooder failed"; }
[[ $(json "$work/slow.json" opened) == 420 ]] || fail "slowloris: the flooder could not open its 420 connections"
[[ $(json "$work/slow.json" still_open) == 0 ]] || fail "slowloris: connections outlived the job"
# Every stranger was closed by node 0 while it ran (shed or timed out), not
# merely when it exited: the log accounts for all 420.
n=$(accounted "$work/slow0.err")
[[ $n == 420 ]] || { show "$work/slow0.err"; fail "slowloris: node 0's log accounts for $n strangers, expected 420"; }
grep -q "no authentication within 5 s" "$work/slow0.err" || grep -q "[0-9]* timed out" "$work/slow0.err" ||
  { show "$work/slow0.err"; fail "slowloris: no handshake timed out"; }
lines=$(rdzv_lines "$work/slow0.err")
((lines <= 15)) || { show "$work/slow0.err"; fail "slowloris: $lines log lines for 420 strangers"; }
pass "slowloris: 420 strangers closed, node 0 logged $lines lines, node 1 joined in $JOIN_S s, job rc 0"

# --- 3. A flood that never lets go: every closed connection opened again ------
attack hold "" --idle 150 --reopen-for 12
lines=$(rdzv_lines "$work/hold0.err")
((lines <= 15)) || { show "$work/hold0.err"; fail "persistent flood: $lines log lines"; }
pass "persistent flood of 150 connections: node 1 joined in $JOIN_S s, node 0 logged $lines lines, job rc 0"

# --- 4. Few descriptors: node 0 under ulimit -n 40 (it cannot raise it) -------
attack fd 40 --idle 300
n=$(accounted "$work/fd0.err")
[[ $n == 300 ]] || { show "$work/fd0.err"; fail "ulimit -n 40: node 0's log accounts for $n strangers, expected 300"; }
grep -q "shed" "$work/fd0.err" || { show "$work/fd0.err"; fail "ulimit -n 40: nothing was shed"; }
pass "300 strangers against node 0 with 40 descriptors: node 1 joined in $JOIN_S s, job rc 0"

# --- 5. Streams as fast as the stranger can send, while the job runs ---------
# stream_attack KIND: node 0 and node 1 run a 13 s job; once both have joined, 10 s of KIND
# from 127.0.0.2. Sets PEAK_KB (node 0's VmHWM, read while it runs).
stream_attack() {
  local kind=$1 n0 n1 flood
  new_step
  start_node "$kind"0 0 13
  n0=$NODE_PID
  wait_for "$work/${kind}0.err" "rendezvous for 2 node(s) on port" 30
  start_node "$kind"1 1 13
  n1=$NODE_PID
  wait_for "$work/${kind}0.err" "step $$.$run: attempt 0: 2 node(s)" 60
  "$PY" "$peer" stream 127.0.0.1 "$RDZV_PORT" --kind "$kind" --seconds 10 --source 127.0.0.2 \
    >"$work/$kind.json" 2>"$work/$kind-flood.err" &
  flood=$!
  pids+=("$flood")
  PEAK_KB=0
  while kill -0 "$n0" 2>/dev/null; do
    local kb
    kb=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$n0/status" 2>/dev/null || true)
    [[ -n $kb ]] && ((kb > PEAK_KB)) && PEAK_KB=$kb
    sleep 0.2
  done
  wait_rc "$n0" 5; [[ $RC == 0 ]] || { show "$work/${kind}"[01].err; fail "$kind stream: node 0 exited $RC"; }
  wait_rc "$n1" 30; [[ $RC == 0 ]] || { show "$work/${kind}"[01].err; fail "$kind stream: node 1 exited $RC"; }
  wait_rc "$flood" 30
  ! grep -q "was lost\|no heartbeat" "$work/${kind}"[01].err || { show "$work/${kind}"[01].err; fail "$kind stream: a node was lost"; }
  echo "$kind stream: $(tail -n 1 "$work/$kind.json"); node 0's peak memory $((PEAK_KB / 1024)) MiB"
  ((PEAK_KB < 64 * 1024)) || fail "$kind stream: node 0 peaked at $((PEAK_KB / 1024)) MiB (limit 64 MiB)"
}
stream_attack lines
pass "a 10 s flood of short lines: node 0 peaked at $((PEAK_KB / 1024)) MiB, no node lost, job rc 0"
stream_attack bytes
pass "a 10 s flood of bytes without a newline: node 0 peaked at $((PEAK_KB / 1024)) MiB, no node lost, job rc 0"

