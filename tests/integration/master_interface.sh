#!/usr/bin/env bash
# MasterInterface=ib0 in the site config: the workers meet on node 0's address
# on that interface (an IPoIB stand-in here), not on Slurm's NodeAddr; node 0's
# agent learns it and the rendezvous carries it to every node. A missing
# interface stops every node at once with one message.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=$(sed -n 's/.*config=\([^ ]*\).*/\1/p' "$CLUSTER_DIR/plugstack.conf")
good=$(cat "$config")
trap 'printf "%s\n" "$good" >"$config"; cleanup_work' EXIT
ib0=$("$DDP_SOURCE_DIR/tests/cluster/cluster.sh" node --name "$CLUSTER_NAME" 0 ip -4 -o addr show ib0 |
  sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p')
[[ -n $ib0 ]] || fail "the test cluster has no ib0 on node 0 (cluster.sh up --ib)"

printf '%s\nMasterInterface=ib0\n' "$good" >"$config"
run srun -N2 --ddp=cpu --ddp-procs=2 "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py"
expect_rc 0 "all_reduce over ib0"
expect_eq "$(grep -c "master=$ib0:.* iface=ib0 .*sum=10 expected=10 OK" <<<"$OUT")" "4" \
  "4 ranks met on node 0's ib0 address, Gloo bound to ib0"

printf '%s\nMasterInterface=ib9\n' "$good" >"$config"
run srun -N2 --ddp=cpu true
expect_failure "a missing MasterInterface"
expect_in "$ERR" "root cause: MasterInterface=ib9 from the site config: node 0" "names the setting and the node"
expect_in "$ERR" "there is no interface ib9" "says what is wrong"
pass "MasterInterface moves MASTER_ADDR to the site's interface"
