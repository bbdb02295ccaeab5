#!/usr/bin/env bash
# The walking skeleton: srun -N2 --ddp=cpu --ddp-procs=2 runs a plain
# torch.distributed program (env://, Gloo) as 4 ranks on 2 network namespaces.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

node0=$CLUSTER_NAME-n0
addr0=$(node_addr "$node0")
[[ -n $addr0 ]] || fail "no NodeAddr for $node0"
# The node names resolve nowhere: MASTER_ADDR can only have come from NodeAddr.
if getent hosts "$node0" >/dev/null; then fail "$node0 resolves; the test needs unresolvable node names"; fi

# On nodes 0 and 1 by name: a test just before may leave node 0 completing
# its last job for a moment, and srun -N2 alone then takes nodes 1 and 2.
run srun -N2 -w "$node0,$CLUSTER_NAME-n1" --ddp=cpu --ddp-procs=2 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py"
expect_rc 0 "srun --ddp allreduce"
lines=$(grep '^rank=' <<<"$OUT" | sort)
expect_eq "$(wc -l <<<"$lines")" "4" "four ranks reported"
for r in 0 1 2 3; do
  line=$(grep "^rank=$r " <<<"$lines") || { show srun; fail "rank $r missing"; }
  expect_in "$line" "world=4 local_world=2 group_rank=$((r / 2))" "rank $r layout"
  expect_in "$line" "local_rank=$((r % 2)) " "rank $r local rank"
  expect_in "$line" "master=$addr0:" "rank $r MASTER_ADDR is node 0's NodeAddr"
  expect_in "$line" "iface=eth0" "rank $r GLOO_SOCKET_IFNAME"
  expect_in "$line" "sum=10 expected=10 OK" "rank $r all_reduce result"
done
# One MASTER_PORT and one run id across both nodes.
expect_eq "$(grep -o 'master=[^ ]*' <<<"$lines" | sort -u | wc -l)" "1" "same MASTER_ADDR:PORT everywhere"
expect_eq "$(grep -o 'run_id=[^ ]*' <<<"$lines" | sort -u | wc -l)" "1" "same TORCHELASTIC_RUN_ID everywhere"
pass "4 ranks on 2 nodes all-reduced correctly"
