#!/usr/bin/env bash
# The rendezvous port under a stranger: a connection that cannot prove the
# step's secret is refused and logged, garbage closes only that connection, and
# the job goes on unaffected.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
sleeper="$DDP_SOURCE_DIR/tests/integration/fixtures/sleeper.py"
addr0=$(node_addr "$CLUSTER_NAME-n0")

bg_srun job -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose "$PYTHON" "$sleeper" 8
wait_lines "$WORK/job.out" "ready rank=" 4 60
port=$(rdzv_port_from "$WORK/job.err")
[[ -n $port ]] || fail "no rendezvous port in the verbose output"
"$PYTHON" - "$addr0" "$port" <<'PY' >"$WORK/stranger.log" 2>&1 || { cat "$WORK/stranger.log" "$WORK/job.err" >&2; fail "the stranger's script failed"; }
import socket, sys
addr, port = sys.argv[1], int(sys.argv[2])
# 1. A forged response: right shape, wrong secret.
s = socket.create_connection((addr, port), timeout=5)
f = s.makefile("rwb")
challenge = f.readline().decode()
assert challenge.startswith("CHALLENGE "), challenge
f.write(b"RESPONSE node=1 cnonce=" + b"ab" * 32 + b" mac=" + b"00" * 32 + b"\n"); f.flush()
print("forged:", f.readline().decode().strip())
s.close()
# 2. Garbage instead of a response.
s = socket.create_connection((addr, port), timeout=5)
s.recv(4096)
s.sendall(b"\x00\x01 not a protocol line\n")
print("garbage:", "closed" if s.recv(4096) == b"" else "open")
s.close()
PY
expect_in "$(cat "$WORK/stranger.log")" "forged: REFUSED reason=authentication%20failed" "a forged response is refused"
expect_in "$(cat "$WORK/stranger.log")" "garbage: closed" "garbage closes that connection"
wait_exit "$BG_PID" 60
OUT=$(cat "$WORK/job.out") ERR=$(cat "$WORK/job.err")
expect_rc 0 "the job goes on"
expect_in "$ERR" "refused a connection from" "the refusal is logged"
pass "rendezvous refuses strangers, the job is unaffected"
