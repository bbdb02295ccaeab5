#!/usr/bin/env bash
# Every benchmark, one command; writes bench/results/RESULTS.md and PNG plots.
#
#   bench/run.sh              # as root (the benchmarks start local Slurm clusters)
#   PAIRS=3 bench/run.sh      # fewer rounds for the training comparisons (default: MLP 7, CNN 10)
#
# Benchmarks are not tests: nothing here asserts a time. Each comparison runs
# its contenders in rounds, in a random order within each round, in one run;
# ratios are taken round by round; figures are medians with min and max, with
# the conditions in each result file. Takes about two hours on the 2-core
# development VM (the training comparison runs twice: natively against Debian
# 12's PyTorch 1.13, and in a Debian 13 chroot against its PyTorch 2.6 with
# torch.compile); doc/benchmarks.md names the minimal set.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}  # the scale simulation's runs per N
out=bench/results
mkdir -p "$out"

packaging/install-deps.sh test
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
agent=build/agent/ddp-agent

echo "bench: training throughput, ddp-train vs PyTorch 1.13 at its best (about 30 minutes)"
/usr/bin/python3 bench/train_bench.py ${PAIRS:+--pairs "$PAIRS"}

echo "bench: the same in a Debian 13 chroot against PyTorch 2.6, torch.compile included (about 50 minutes)"
PAIRS=${PAIRS:-} tests/chroot/run.sh trixie --bench

echo "bench: launch latency, srun --ddp vs torchrun vs the workers alone"
/usr/bin/python3 bench/launch_bench.py

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
