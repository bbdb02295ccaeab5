#!/usr/bin/env bash
# The main job, from a fresh clone: install dependencies, build, start a local
# 2-node Slurm cluster with the freshly built plugin, and train an MLP on
# Fashion-MNIST with 4 CPU workers through `srun -N2 --ddp=cpu --ddp-procs=2`.
#
#   ./examples/run-demo.sh            # as root; tears the cluster down at the end
#   KEEP_CLUSTER=1 ./examples/run-demo.sh   # leave it up to play with
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

packaging/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "run-demo: built spank_ddp.so, ddp-agent, ddp-train in build/"

cluster=tests/cluster/cluster.sh
$cluster up --name demo --nodes 2 --plugin "$src/build/spank/spank_ddp.so" --agent "$src/build/agent/ddp-agent"
if [[ -z ${KEEP_CLUSTER:-} ]]; then trap '$cluster down --name demo >/dev/null' EXIT; fi
eval "$($cluster env --name demo)"

echo "run-demo: srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose /usr/bin/python3 examples/train_fashion_mnist.py"
srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose /usr/bin/python3 examples/train_fashion_mnist.py --epochs 2
