#!/usr/bin/env bash
# ddp-agent without Slurm, like `torchrun --standalone`.
set -euo pipefail
agent=${1:?path to ddp-agent}
src=${2:?source dir}
out=$(timeout 90 "$agent" --nproc 2 -- /usr/bin/python3 "$src/examples/allreduce.py")
[[ $(grep -c 'sum=3 expected=3 OK$' <<<"$out") == 2 ]] || { echo "$out"; echo "FAIL: expected 2 OK ranks"; exit 1; }
set +e
timeout 30 "$agent" -- true 2>/tmp/agent-err.$$; rc=$?
set -e
[[ $rc == 2 ]] && grep -q -- "--nproc N" /tmp/agent-err.$$ || { cat /tmp/agent-err.$$; echo "FAIL: no --nproc should say how"; exit 1; }
rm -f /tmp/agent-err.$$
# The seeds' style of script (DistributedSampler, DDP, Fashion-MNIST), unmodified.
out=$(timeout 120 "$agent" --nproc 2 -- /usr/bin/python3 "$src/examples/train_fashion_mnist.py" --epochs 1)
grep -q 'epoch 1/1: test accuracy 0\.[7-9]' <<<"$out" || { echo "$out"; echo "FAIL: standalone training"; exit 1; }
echo "PASS: standalone agent runs torch workers"
