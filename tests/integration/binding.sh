#!/usr/bin/env bash
# Binding planned through hwloc on GPU node topologies (hwloc XML from
# tests/topologies/make_topology.cpp, via TopologyFile= in the site config)
# with fake GPUs mapped to PCI addresses through fake NVIDIA driver files
# (GpuInfoDir=). Expected answers worked out by hand from the node shapes
# (tests/topologies/README.md; tests/integration/CMakeLists.txt has the mapping):
#   node 0, 2s-4xH100-2xmlx5:  nvidia0 = 18:00.0 -> package 0 PUs 0-3, mlx5_0 (PIX)
#                              nvidia1 = 98:00.0 -> package 1 PUs 4-7, mlx5_1 (PIX)
#   node 1, 2s-16c-3xM2075:    nvidia0 = 83:00.0 and nvidia1 = 84:00.0 share
#                              package 1 (cores with PUs 8-15 + siblings 24-31):
#                              4 cores each, 8-11,24-27 and 12-15,28-31; the only
#                              HCA, mlx5_0, for both.
# This VM has 2 CPUs, so the agent cannot apply those pins; it says so.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

script='echo "rank=$RANK hca=$NCCL_IB_HCA omp=$OMP_NUM_THREADS order=$CUDA_DEVICE_ORDER"'
run srun -N2 --gpus-per-node=2 --ddp --ddp-verbose /bin/sh -c "$script"
expect_rc 0 "srun --ddp on the XML topologies"
# One summary for the whole step, from node 0's agent.
expect_in "$ERR" "rank 0: gpu 0000:18:00.0 cpus 0-3 nic mlx5_0" "H100 GPU 18 binding"
expect_in "$ERR" "rank 1: gpu 0000:98:00.0 cpus 4-7 nic mlx5_1" "H100 GPU 98 binding"
expect_in "$ERR" "rank 2: gpu 0000:83:00.0 cpus 8-11,24-27 nic mlx5_0" "M2075 GPU 83 binding"
expect_in "$ERR" "rank 3: gpu 0000:84:00.0 cpus 12-15,28-31 nic mlx5_0" "M2075 GPU 84 binding"
expect_eq "$(grep -c "^ddp-agent: info: step " <<<"$ERR")" "1" "one step summary"
expect_in "$ERR" "node 1 (" "the summary covers node 1 too"
expect_in "$OUT" "rank=0 hca==mlx5_0 omp=4 order=PCI_BUS_ID" "rank 0 environment"
expect_in "$OUT" "rank=1 hca==mlx5_1 omp=4" "rank 1 environment"
expect_in "$OUT" "rank=2 hca==mlx5_0 omp=8" "rank 2 environment"
expect_in "$OUT" "rank=3 hca==mlx5_0 omp=8" "rank 3 environment"
expect_in "$ERR" "cannot be pinned to its planned CPUs" "pins this machine cannot apply are reported"

# A GPU whose PCI address is unknown: the worker keeps its GPU, runs unbound,
# and the user is told which GPU and what to check.
config=$(sed -n 's/.*config=\([^ ]*\).*/\1/p' "$CLUSTER_DIR/plugstack.conf")
good=$(cat "$config")
trap 'printf "%s\n" "$good" >"$config"' EXIT
empty=$(mktemp -d)
sed -i "s|GpuInfoDir=[^ ]*gpus-n1|GpuInfoDir=$empty|" "$config"
run srun -N2 --gpus-per-node=2 --ddp /bin/sh -c "$script"
expect_rc 0 "unknown GPU address"
expect_in "$ERR" "ddp: warning: node $CLUSTER_NAME-n1: GPU 0 (/dev/nvidia0) is not in $empty, so its PCI address is unknown: worker 0 runs unbound" "unknown GPU named"
expect_in "$OUT" "rank=2 hca= omp=1" "unbound worker: no HCA, torchrun's thread default"
rmdir "$empty"
pass "binding follows the node topologies"
