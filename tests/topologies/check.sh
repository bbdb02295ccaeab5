#!/usr/bin/env bash
# The generated node topologies load in hwloc's own lstopo, as README.md in
# this folder shows them to a reader, and show their GPUs (NVIDIA 3D
# controllers, by bus id), their InfiniBand HCAs, the DGX-2's NVSwitches, the
# POWER8 node's NVLink matrix and the M2075 node's root port whose devices'
# bus numbers do not follow the tree. A file hwloc cannot read, or one that
# lost part of its PCI tree, fails here with what lstopo said.
#
#   tests/topologies/check.sh DIR    # DIR: build/tests/topologies
set -euo pipefail
dir=${1:?usage: check.sh DIR (the generated topologies, build/tests/topologies)}
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# lstopo FILE [OPTION...]: what lstopo shows of the file, or a failure.
lstopo() {
  local file=$dir/$1
  shift
  lstopo-no-graphics --if xml --input "$file" -p "$@" 2>&1 || echo "lstopo cannot read $file"
}

# devices_below FILE BUSID: the PCI bridge BUSID's buses and the PCI devices
# right below it with their vendor:device ids ("0000:[84-84] 0000:84:00.0
# 10de:1094 ..."), as lstopo -v shows them.
devices_below() {
  lstopo "$1" -v | awk -v port="busid=$2 " '
    function indent() { return match($0, /[^ ]/) }
    function field(pattern) { match($0, pattern); return substr($0, RSTART, RLENGTH) }
    index($0, port) { depth = indent(); out = field("buses=[^)]*"); next }
    depth && indent() <= depth { depth = 0 }
    depth && indent() == depth + 2 && /^ *PCI / { out = out " " field("busid=[^ ]* id=[^ ]*") }
    END { gsub(/buses=|busid=|id=/, "", out); print out }'
}

# expect_devices FILE GPUS HCAS: lstopo shows those GPUs and HCAs (blank-separated, in its order).
expect_devices() {
  local shown gpus hcas
  shown=$(lstopo "$1")
  gpus=$(sed -n 's/.*PCI \([0-9a-f:.]*\) (3D).*/\1/p' <<<"$shown" | paste -sd' ')
  hcas=$(sed -n 's/.*OpenFabrics "\(.*\)".*/\1/p' <<<"$shown" | paste -sd' ')
  if [[ $gpus == "$2" && $hcas == "$3" ]]; then
    echo "ok: $1: GPUs $gpus${hcas:+, HCAs $hcas}"
  else
    fail "$1: GPUs [$gpus] HCAs [$hcas], expected [$2] [$3]; lstopo shows:"$'\n'"$shown"
  fi
}

expect_devices 2s-4xH100-2xmlx5.xml "18:00.0 19:00.0 2c:00.0 98:00.0" "mlx5_0 mlx5_1"
expect_devices 2s-16c-3xM2075-mlx5.xml "03:00.0 83:00.0 84:00.0" "mlx5_0"
expect_devices dgx2-16xV100-nvswitch.xml \
  "34:00.0 36:00.0 39:00.0 3b:00.0 57:00.0 59:00.0 5c:00.0 5e:00.0 b7:00.0 b9:00.0 bc:00.0 be:00.0 e0:00.0 e2:00.0 e5:00.0 e7:00.0" ""
expect_devices power8-4xP100-nvlink.xml "0002:01:00.0 0003:01:00.0 000a:01:00.0 000b:01:00.0" ""

# The M2075 node's root port 80:03.0 (bus 84 only) holds GPU 84:00.0, an AMD
# VGA function 84:00.1 beside it, and the HCA numbered 04:00.0, outside the
# port's buses: a tree whose bus numbers do not follow it, as some firmware makes.
below=$(devices_below 2s-16c-3xM2075-mlx5.xml 0000:80:03.0)
[[ $below == "0000:[84-84] 0000:84:00.0 10de:1094 0000:84:00.1 1002:6798 0000:04:00.0 15b3:1013" ]] ||
  fail "2s-16c-3xM2075-mlx5.xml: root port 80:03.0 shows [$below], expected its buses 84-84 and GPU 84:00.0, AMD VGA 84:00.1, HCA 04:00.0"

# The NVSwitches are NVIDIA devices but not GPUs (class 0680); lstopo keeps
# them only with --whole-io.
switches=$(lstopo dgx2-16xV100-nvswitch.xml --whole-io -v | grep -c 'id=10de:1ac1 class=0680' || true)
[[ $switches == 12 ]] || fail "dgx2-16xV100-nvswitch.xml: $switches NVSwitches (10de:1ac1, class 0680), expected 12"
# NVLink: two links (40 GB/s) between the GPUs of a pair and from each GPU to its package.
matrix=$(lstopo power8-4xP100-nvlink.xml --distances)
row=$(grep -E '^ *nvml0 ' <<<"$matrix" | tr -s ' ' || true)
[[ $matrix == *"NVLinkBandwidth"*"between 6 heterogeneous objects"* && $row == " nvml0 0 40000 0 0 40000 0" ]] ||
  fail "power8-4xP100-nvlink.xml: no NVLink matrix as expected (nvml0's row: [$row]); lstopo --distances shows:"$'\n'"$matrix"

((failures == 0)) || { echo "check.sh: $failures topology check(s) failed"; exit 1; }
echo "check.sh: every topology loads in lstopo with its GPUs, HCAs, NVSwitches, NVLink matrix and PCI tree as expected"
