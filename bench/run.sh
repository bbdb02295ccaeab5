#!/usr/bin/env bash
# Every benchmark, one command; writes bench/results/RESULTS.md and PNG plots.
#
#   bench/run.sh              # as root (the launch benchmark starts a local Slurm cluster)
#   REPEATS=5 bench/run.sh    # more pairs per comparison (default 3)
#
# Benchmarks are not tests: nothing here asserts a time. Each comparison is
# paired (A B A B ...) in one run and its ratio taken pair by pair; figures are
# medians with min and max. Takes about 45 minutes on the 2-core development VM
# (the training comparison runs twice: natively against Debian 12's PyTorch
# 1.13, and in a Debian 13 chroot against its PyTorch 2.6).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}
out=bench/results
mkdir -p "$out"

packaging/install-deps.sh test
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
agent=build/agent/ddp-agent

echo "bench: training throughput, ddp-train vs PyTorch DDP"
bench/trainer_bench.py --repeats "$repeats"

echo "bench: training throughput again in a Debian 13 chroot: ddp-train vs PyTorch 2.6 DDP"
REPEATS=$repeats tests/chroot/run.sh trixie --bench

echo "bench: the tutorials' CNN under srun --ddp, ddp-train vs PyTorch DDP (about 8 minutes a pair)"
/usr/bin/python3 bench/cnn_bench.py --repeats "$repeats"

echo "bench: launch latency, srun --ddp vs torchrun vs the workers alone"
bench/launch_bench.py --repeats "$((repeats + 2))"

echo "bench: slurmctld's RPCs per step, srun --ddp vs plain srun, at 1, 8 and 64 nodes"
/usr/bin/python3 bench/rpc_bench.py --rounds 7

echo "bench: all-reduce bandwidth (shared memory, Gloo TCP) and the memcpy ceiling"
OMP_NUM_THREADS=1 $agent --nproc 2 --no-prefix -- build/bench/ddp-allreduce-bench >"$out/allreduce-shm.txt"
OMP_NUM_THREADS=1 DDP_NO_SHM=1 $agent --nproc 2 --no-prefix -- build/bench/ddp-allreduce-bench >"$out/allreduce-gloo.txt"
build/bench/ddp-allreduce-bench --memcpy >"$out/memcpy.txt"

echo "bench: rendezvous and failure detection of N agents (simulated nodes on loopback)"
/usr/bin/python3 bench/scale_sim.py --repeats "$repeats" --out "$out/scale.json"

/usr/bin/python3 bench/report.py --results "$out" --build build
echo "bench: wrote $out/RESULTS.md"
