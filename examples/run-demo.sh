#!/usr/bin/env bash
# The main job, from a fresh clone: install dependencies, build, start a local
# 2-node Slurm cluster with the freshly built plugin, and train ddp-train's MLP
# on Fashion-MNIST with 2 CPU workers (one per node) through `sbatch --ddp`
# (examples/train-mlp.sbatch); prints test accuracy and samples/s and plots
# the metrics to PNG.
#
#   ./examples/run-demo.sh            # as root; tears the cluster down at the end
#   KEEP_CLUSTER=1 ./examples/run-demo.sh   # leave it up to play with
#   DDP_MODEL=cnn ./examples/run-demo.sh    # the CNN of PyTorch's MNIST example (minutes, not seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

# The test mode: Debian's Slurm daemons for the local cluster, the data set, gnuplot.
packaging/install-deps.sh test
# The programs only: the demo needs no test (tests/run-all.sh builds them).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDP_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "run-demo: built spank_ddp.so, ddp-agent, ddp-train in build/"

cluster=tests/cluster/cluster.sh
$cluster up --name demo --nodes 2 --plugin "$src/build/spank/spank_ddp.so" --agent "$src/build/agent/ddp-agent"
if [[ -z ${KEEP_CLUSTER:-} ]]; then trap '$cluster down --name demo >/dev/null' EXIT; fi
eval "$($cluster env --name demo)"

out=$(mktemp -d /tmp/ddp-demo.XXXXXX)
echo "run-demo: sbatch --wait examples/train-mlp.sbatch (output in $out)"
DDP_TRAIN=$src/build/trainer/ddp-train DDP_DEMO_OUT=$out \
  sbatch --wait -o "$out/job.out" -e "$out/job.err" examples/train-mlp.sbatch >/dev/null || {
  cat "$out/job.out" "$out/job.err" >&2
  echo "run-demo: the job failed" >&2
  exit 1
}
cat "$out/job.out"
final=$(grep '"event":"final"' "$out/metrics.jsonl")
acc=$(sed -n 's/.*"test_accuracy":\([0-9.]*\).*/\1/p' <<<"$final")
rate=$(sed -n 's/.*"samples_per_second":\([0-9.]*\).*/\1/p' <<<"$final")
trainer/ddp-train-plot "$out/metrics.jsonl" "$out/metrics.png" >/dev/null
printf 'run-demo: test accuracy %.4f, %.0f samples/s (2 CPU workers on 2 nodes); plot: %s\n' "$acc" "$rate" \
  "$out/metrics.png"
