#!/usr/bin/env bash
# A rolling upgrade: a step spans a node of the older slurm-ddp release
# (plugin and agent: rendezvous protocol 3) and nodes of this one. Each
# direction ends within seconds with one message naming the node and both
# versions, never the rendezvous timeout: the old side cannot change, so this
# release detects it (common/ddp/wire/rdzv_messages.hpp, protocol 5 on).
#
#   tests/package/mixed_versions.sh OLD_PLUGIN OLD_AGENT NEW_PLUGIN NEW_AGENT   # root
#
# On a real cluster (tests/cluster/cluster.sh) whose node I is "not yet
# upgraded": its slurmd runs on a copy of slurm.conf whose PlugStackConfig
# names the older plugin, as a node with the older package has it.
set -euo pipefail
(($# == 4)) || { echo "usage: mixed_versions.sh OLD_PLUGIN OLD_AGENT NEW_PLUGIN NEW_AGENT" >&2; exit 2; }
# plugstack.conf and agent= take absolute paths (Slurm reads a relative one
# from its PluginDir).
old_plugin=$(realpath "$1") old_agent=$(realpath "$2") new_plugin=$(realpath "$3") new_agent=$(realpath "$4")
cd "$(dirname "$0")/../.."
cluster=tests/cluster/cluster.sh
name=mixver
dir=/tmp/slurm-ddp-clusters/$name

fail() { echo "mixed_versions: FAIL: $*" >&2; exit 1; }
say() { echo "mixed_versions: $*"; }

trap '"$cluster" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$cluster" up --name "$name" --nodes 2 --plugin "$new_plugin" --agent "$new_agent" >/dev/null
eval "$("$cluster" env --name "$name")"
echo "required $old_plugin agent=$old_agent" >"$dir/plugstack-old.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/plugstack-old.conf|" "$dir/slurm.conf" >"$dir/slurm-old.conf"

# run_on_slurmd I CONF: node I's slurmd again, on CONF.
run_on_slurmd() {
  pkill -f "slurmd -N $name-n$1 " || true
  for _ in $(seq 50); do pgrep -f "slurmd -N $name-n$1 " >/dev/null || break; sleep 0.1; done
  nsenter --net="/var/run/netns/sddp-$name-n$1" slurmd -N "$name-n$1" -f "$2"
  for _ in $(seq 50); do [[ $(sinfo -h -n "$name-n$1" -o '%T') == idle ]] && return 0; sleep 0.2; done
  fail "node $1's slurmd did not come back"
}

step() {  # step WHAT: a 2-node --ddp step that must fail with a named version
  set +e
  err=$(timeout 120 srun -N2 --ddp=cpu true 2>&1 >/dev/null)
  rc=$?
  set -e
  ((rc != 124)) || fail "$1: srun hung"
  ((rc != 0)) || fail "$1: the step ran"
  [[ $err != *"rendezvous timed out"* ]] || { echo "$err" >&2; fail "$1: waited for the rendezvous timeout"; }
}
expect() {  # expect NEEDLE WHAT
  [[ $err == *"$1"* ]] || { echo "$err" >&2; fail "$2: expected '$1'"; }
}

# Node 1 not yet upgraded: node 0's agent (this release) refuses it by name.
run_on_slurmd 1 "$dir/slurm-old.conf"
step "older node 1"
expect "root cause: node 1 (from " "node 0 names node 1"
expect "runs slurm-ddp of an older release (rendezvous protocol 3) but node 0 runs slurm-ddp" "both versions"
say "node 1 on the older release: node 0 names it and both protocols"

# Node 0 not yet upgraded: this release's agent on node 1 makes the older
# coordinator end the step, naming it, and says the same itself.
run_on_slurmd 1 "$dir/slurm.conf"
run_on_slurmd 0 "$dir/slurm-old.conf"
step "older node 0"
expect "node 1 (" "the older node 0 names node 1"
protocol=$(sed -n 's/.*kProtocolVersion = \([0-9]*\);.*/\1/p' "$(dirname "$0")/../../common/ddp/wire/rdzv_messages.hpp")
expect "runs a ddp-agent with protocol $protocol but node 0 runs protocol 3" "the older node 0 names both protocols"
expect "the rendezvous on node 0 runs an older slurm-ddp (protocol 3), this agent slurm-ddp" "node 1 says it too"
say "node 0 on the older release: it names node 1 and both protocols, and so does node 1"

run_on_slurmd 0 "$dir/slurm.conf"
out=$(timeout 120 srun -N2 --ddp=cpu printenv RANK 2>/dev/null | sed 's/^\[rank [0-9]*\] //' | sort | tr '\n' ' ')
[[ $out == "0 1 " ]] || fail "both nodes upgraded: ranks '$out'"
[[ $(sinfo -h -N -o '%T' | sort -u) == idle ]] || fail "a node is not idle: $(sinfo -N)"
say "both upgraded: the step runs; no node drained"
