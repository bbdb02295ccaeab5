#!/usr/bin/env bash
# --ddp-preflight: before any worker starts, every node times a GEMM and
# transfers to and from two other nodes (a ring, node 0 in it), and a node
# far off the others is named with its figures (check) or taken out for a
# spare (swap). On a 4-node cluster:
#   1. healthy, three times: every node's figures, no verdict, the run ends 0;
#   2. node 1's CPUs capped at 15% of one CPU (a cpu cgroup, v1 or v2, holding
#      its slurmd, so the step's processes start in it): named for its
#      compute, not for its link (its slow sends are its CPUs'), the run goes
#      on; with swap and a spare, node 3 takes its ranks before any worker
#      starts, and no restart is spent;
#   3. node 2's link slowed with tc (tbf, 100 Mbit/s, on eth0 in its
#      namespace): named for its link, not for its compute; then node 0's
#      (in the ring like every other node, its transfers are judged too);
#   4. a bad value is refused by srun at once, naming the choices.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
script=$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py
cg=""
cleanup() {
  for n in 0 2; do ip netns exec "sddp-$CLUSTER_NAME-n$n" tc qdisc del dev eth0 root 2>/dev/null || true; done
  [[ -z $cg ]] || cgroup_drop "$cg"
  cleanup_work
}
trap cleanup EXIT

# 1. Healthy: no verdict, three runs (bench/ repeats it many times).
for i in 1 2 3; do
  run srun -N4 --ddp=cpu --ddp-preflight=check --ddp-verbose "$PYTHON" "$script"
  expect_rc 0 "a healthy run with --ddp-preflight=check (run $i)"
  expect_in "$ERR" "pre-flight compute by node: 0=" "every node's GEMM figure"
  expect_in "$ERR" "pre-flight network by node: 0=" "every node's transfer figure, node 0's too"
  expect_not_in "$ERR" "pre-flight: node" "no node named in a healthy run (run $i)"
  expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "the workers ran after the checks (run $i)"
done
healthy=$(grep 'pre-flight compute by node' <<<"$ERR")

# 2. Node 1's CPUs capped.
cg=$(cgroup_make cpu "ddp-test-preflight-$$")
cgroup_limit "$cg" cpu 15
cgroup_put "$cg" "$(slurmd_pid 1)"
run srun -N4 --ddp=cpu --ddp-preflight=check "$PYTHON" "$script"
expect_rc 0 "--ddp-preflight=check goes on after naming a node"
expect_in "$ERR" "pre-flight: node 1 ($(hostname), " "the capped node is named"
expect_in "$ERR" ") computes slowly: its GEMM ran at " "for its compute, with its figures"
expect_in "$ERR" '"event":"preflight","check":"compute","node":1,' "and a machine-readable line"
expect_not_in "$ERR" "has a slow link" "its slow sends are not blamed on its link"
expect_eq "$(grep -c 'pre-flight: node' <<<"$ERR")" "1" "one node named"
expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "the run went on with every node"
named=$(grep 'pre-flight: node 1' <<<"$ERR")
run srun -N4 -k --ddp=cpu --ddp-spares=1 --ddp-preflight=swap "$PYTHON" "$script"
expect_rc 0 "--ddp-preflight=swap with a spare"
expect_in "$ERR" "is unhealthy, taken out of the step: slow in the pre-flight (--ddp-preflight=swap): its GEMM ran at" \
  "swap takes node 1 out"
expect_in "$ERR" "spare node 3 ($(hostname), " "the spare takes its place"
expect_eq "$(grep -c 'world=3 .* sum=6 expected=6 OK$' <<<"$OUT")" "3" "three workers ran, none on node 1"
expect_not_in "$ERR" "restarting every worker" "no worker had started: no restart spent"
cgroup_drop "$cg"
cg=""

# 3. Node 2's link slowed, then node 0's (judged as the others are): the
# slow node is named for its link, alone (not the nodes it sent to), not for
# its compute. Its line goes to $named_link.
slow_link_named() {
  local node=$1
  ip netns exec "sddp-$CLUSTER_NAME-n$node" tc qdisc add dev eth0 root tbf rate 100mbit burst 32kbit latency 400ms ||
    fail "cannot shape node $node's link with tc tbf"
  run srun -N4 --ddp=cpu --ddp-preflight=check --ddp-verbose "$PYTHON" "$script"
  expect_rc 0 "a run with node $node's link slow and --ddp-preflight=check"
  expect_in "$ERR" "pre-flight: node $node ($(hostname), " "node $node's slow link is named"
  expect_in "$ERR" ") has a slow link: its transfers out ran at best at " "for its link"
  expect_not_in "$ERR" "computes slowly" "not for its compute"
  expect_eq "$(grep -c 'pre-flight: node' <<<"$ERR")" "1" "only node $node named, not the nodes it sent to"
  named_link=$(grep "pre-flight: node $node" <<<"$ERR")
  ip netns exec "sddp-$CLUSTER_NAME-n$node" tc qdisc del dev eth0 root
}
slow_link_named 2
slow_link=$named_link
slow_link_named 0
slow_node0=$named_link

# 4. A bad value.
run srun -N4 --ddp=cpu --ddp-preflight=full true
expect_failure "--ddp-preflight=full"
expect_in "$ERR" "--ddp-preflight='full': use check (name a node far off the others), swap" "the choices are named"
pass "pre-flight: healthy x3 no verdict ($healthy); ${named#*: }; ${slow_link#*: }; ${slow_node0#*: }"
