#!/usr/bin/env bash
# Ports that never collide: six 2-node steps started at once on the same two
# nodes with a 16-port site range (the field's case: ports derived from the
# job and step ids plus a check alone collide here, "MASTER_PORT ... is
# already in use"). Each step's rank 0 binds MASTER_PORT the way PyTorch's
# TCPStore does and holds it while the other steps run; rank 1 fails the first
# attempt, so every step restarts once on a new MASTER_PORT. Node 0's agents
# claim each port (ddp/node/port_claim.hpp): every step ends 0, and the six
# held six rendezvous ports and six MASTER_PORTs at one time.
# Then the holders are named truthfully (ddp/node/port_holder.hpp): another
# step's agent holding a --ddp-port is "another slurm-ddp step"; another user
# who binds every claim name of the range (half of them listening) and a TCP
# port, as anyone can, is named by pid and user as a process that is not one.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=${1:?path to the site config named in plugstack.conf}
good=$(cat "$config")
trap 'printf "%s\n" "$good" >"$config"; cleanup_work' EXIT
sed -i 's/^PortRange=[0-9-]*/PortRange=23100-23115/' "$config"
grep -q '^PortRange=23100-23115' "$config" || fail "the test could not set PortRange in $config"

# Rank 0 binds MASTER_PORT (SO_REUSEADDR, listening, as TCPStore); a bind
# that fails is a collision. Rank 1 fails attempt 0 after 1 s. In attempt 1
# rank 0 holds its port until all six steps hold theirs (a file each in
# STEPS_DIR), so every port asserted distinct below was held at one time.
worker=$(cat <<'PY'
import glob, os, socket, sys, time
rank, attempt = int(os.environ["RANK"]), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
port, steps = int(os.environ["MASTER_PORT"]), os.environ["STEPS_DIR"]
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("", port))
    except OSError as e:
        print(f"COLLISION on MASTER_PORT {port}: {e}", flush=True)
        sys.exit(3)
    s.listen()
    print(f"attempt {attempt} holds MASTER_PORT {port}", flush=True)
    if attempt == 1:
        open(f"{steps}/holding.{os.environ['SLURM_STEP_ID']}", "w").close()
        deadline = time.time() + 90
        while len(glob.glob(f"{steps}/holding.*")) < 6 and time.time() < deadline:
            time.sleep(0.2)
        print(f"held while {len(glob.glob(f'{steps}/holding.*'))} steps held theirs", flush=True)
    time.sleep(1)
elif attempt == 0:
    time.sleep(1)
    sys.exit(1)
PY
)
out=$WORK/steps
mkdir -p "$out"
set +e
STEPS_DIR=$WORK/steps timeout 150 salloc -N2 --ddp=cpu bash -c '
  for i in 1 2 3 4 5 6; do
    { srun --overlap -N2 --ntasks-per-node=1 --ddp-restarts=1 --ddp-verbose '"$PYTHON"' -c "$0" \
        >"$1/$i.out" 2>"$1/$i.err"; echo $? >"$1/$i.rc"; } &
  done
  wait' "$worker" "$out" >"$WORK/salloc.out" 2>&1
set -e

failed=0 collisions=0
declare -A rdzv_of=()
for i in 1 2 3 4 5 6; do
  [[ -s $out/$i.out || -s $out/$i.err ]] || fail "step $i left no output (salloc: $(cat "$WORK/salloc.out"))"
  ok=1
  grep -q "COLLISION\|already in use\|none of the" "$out/$i.out" "$out/$i.err" && collisions=$((collisions + 1)) ok=0
  [[ $(cat "$out/$i.rc" 2>/dev/null) == 0 ]] || failed=$((failed + 1)) ok=0
  grep -q "attempt 1 holds MASTER_PORT" "$out/$i.out" || ok=0
  rdzv=$(sed -n 's/.*rendezvous port \([0-9]*\).*/\1/p' "$out/$i.err" | head -1)
  [[ -n $rdzv ]] && rdzv_of[$i]=$rdzv || ok=0
  ((ok)) || { echo "--- step $i (no second attempt holding its port, or no rendezvous port in node 0's summary):"
              cat "$out/$i.out" "$out/$i.err"; } >&2
done
echo "collisions seen: $collisions of 6 steps; steps failed: $failed"
# A step that never met (node 1 finds no rendezvous, node 0 prints
# nothing): what the daemons saw.
if ((failed > 0)); then
  { echo "--- salloc:"; cat "$WORK/salloc.out"
    for n in 0 1; do echo "--- slurmd of node $n (tail):"; tail -n 40 "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n$n.log"; done
  } >&2 2>/dev/null || true
  diagnose
fi
expect_eq "$collisions" "0" "collisions among six concurrent steps on shared nodes"
expect_eq "$failed" "0" "steps that did not exit 0"
expect_eq "$(printf '%s\n' "${rdzv_of[@]}" | sort -u | wc -l)" "6" "six rendezvous ports, one per step"
expect_eq "$(grep -l "attempt 1 holds MASTER_PORT" "$out"/*.out | wc -l)" "6" "six steps restarted on a MASTER_PORT they held"
expect_eq "$(grep -l "held while 6 steps held theirs" "$out"/*.out | wc -l)" "6" "all six held their ports at one time"
expect_eq "$(sed -n 's/.*attempt 1 holds MASTER_PORT //p' "$out"/*.out | sort -u | wc -l)" "6" \
  "six MASTER_PORTs held at one time"
# Every port inside the range.
for port in $(sed -n 's/.*holds MASTER_PORT \([0-9]*\).*/\1/p' "$out"/*.out) "${rdzv_of[@]}"; do
  ((port >= 23100 && port <= 23115)) || fail "port $port is outside PortRange=23100-23115"
done
pass "six concurrent 2-node steps, two attempts each, 16-port range: 0 collisions, rendezvous ports ${rdzv_of[*]}"

# --- who holds a port, named truthfully ---------------------------------------
# A step's agent holds MASTER_PORT 23300 (--ddp-port): a second step on it is
# refused, the holder named as a step.
bg_srun holder -N1 --ddp=cpu --ddp-port=23300 /bin/sh -c 'echo holding; sleep 8'
wait_lines "$WORK/holder.out" "holding" 1 30
run srun -N1 --ddp=cpu --ddp-port=23300 true
expect_failure "a step on the --ddp-port another step's agent holds"
expect_in "$ERR" "MASTER_PORT 23300 (--ddp-port) is in use on node 0 by another slurm-ddp step (pid " \
  "another step's agent is named as a step"
wait_exit "$BG_PID" 30

# Another user squats the range's claim names in node 0's network namespace,
# as anyone can bind an abstract socket's name; even ones listen, odd ones
# only hold the name. And a TCP port, for --ddp-port.
mallory=ddp-mallory
id -u "$mallory" >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$mallory"
muid=$(id -u "$mallory")
squat=$(cat <<'PY'
import os, socket, sys, time
held = []
if sys.argv[1] == "claims":
    for port in range(23100, 23116):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(f"\0slurm-ddp/port/{port}")
        if port % 2 == 0:
            s.listen()
        held.append(s)
else:
    held.append(socket.socket())
    held[0].bind(("", 23301))
    held[0].listen()
print("holding", os.getpid(), flush=True)
time.sleep(60)
PY
)
node0=$CLUSTER_NAME-n0
squatter=
trap 'kill $squatter 2>/dev/null; printf "%s\n" "$good" >"$config"; cleanup_work' EXIT
# squat WHAT: user mallory holds WHAT (claims, tcp) on node 0; its pid in $spid.
squat() {
  [[ -z $squatter ]] || { kill "$squatter"; wait "$squatter" 2>/dev/null || true; }
  ip netns exec "sddp-$CLUSTER_NAME-n0" runuser -u "$mallory" -- "$PYTHON" -c "$squat" "$1" >"$WORK/squat-$1.out" 2>&1 &
  squatter=$!
  wait_lines "$WORK/squat-$1.out" "holding" 1 10
  spid=$(awk '{ print $2 }' "$WORK/squat-$1.out")
}
squat claims
run srun -N1 -w "$node0" --ddp=cpu true
expect_failure "a step whose every rendezvous port another user squats"
expect_in "$ERR" "none of the 16 port(s) tried in PortRange=23100-23115 (16 ports) is free on node 0: 0 held by other slurm-ddp steps, 16 by other processes (" \
  "the squatted claims are not counted as steps"
expect_in "$ERR" "pid $spid, user $mallory (uid $muid), holding the port's claim name;" "a listening squatter named"
expect_in "$ERR" "pid $spid, user $mallory (uid $muid), holding the port's claim name without listening" \
  "a squatter that only holds the name named"
squat tcp
run srun -N1 -w "$node0" --ddp=cpu --ddp-port=23301 true
expect_failure "a --ddp-port another user listens on"
expect_in "$ERR" "MASTER_PORT 23301 (--ddp-port) is in use on node 0 by a process that is not a slurm-ddp step (pid $spid, user $mallory (uid $muid), listening)" \
  "the TCP port's holder named by pid and user"
kill "$squatter" 2>/dev/null || true
pass "holders named: another step's agent as a step; user $mallory's squatted claims and TCP port by pid and user"
