#!/usr/bin/env bash
# One GPU: ddp-gpu-selftest (every Ops method on CUDA against the CPU backend,
# plus a one-rank NCCL communicator), then one epoch of Fashion-MNIST on the
# GPU under ddp-agent, which must reach a test accuracy of at least 0.8.
# Usage: tests/gpu/smoke-1gpu.sh   (OUT=dir keeps the results, BUILD_DIR=dir
# picks the build, DATA=dir the Fashion-MNIST IDX files)
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_targets ddp-gpu-selftest ddp-train ddp-agent

echo "== ddp-gpu-selftest"
"$selftest"

echo "== 1 GPU, 1 epoch of Fashion-MNIST (results in $OUT)"
rm -f "$OUT/m.jsonl"
"$agent" --nproc 1 -- "$trainer" --device cuda --model mlp --data "$data" --epochs 1 --batch-size 128 \
  --metrics "$OUT/m.jsonl"
check_final_accuracy "$OUT/m.jsonl" 0.8
echo "smoke-1gpu: PASS"
