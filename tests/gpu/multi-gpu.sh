#!/usr/bin/env bash
# All GPUs of this machine, one rank each (NCCL between them):
#  1. one epoch of Fashion-MNIST on N ranks reaches a test accuracy >= 0.8;
#  2. parity: the same global batch on 1 GPU and on N GPUs gives the same
#     final parameters (max abs difference <= 1e-4): data parallelism with
#     the pre-divided all-reduce computes the same mean gradient.
# Usage: tests/gpu/multi-gpu.sh   (OUT, BUILD_DIR, DATA as in smoke-1gpu.sh)
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=$(gpu_count)
if ((n < 2)); then
  echo "multi-gpu: needs at least 2 GPUs, nvidia-smi lists $n" >&2
  exit 2
fi
build_targets ddp-train ddp-agent

# The global batch must split evenly over the ranks: 128, or just below it.
batch=$((128 / n * n))
echo "== $n GPUs, 1 epoch of Fashion-MNIST, global batch $batch (results in $OUT)"
rm -f "$OUT/m.jsonl"
"$agent" --nproc "$n" -- "$trainer" --device cuda --model mlp --data "$data" --epochs 1 --batch-size "$batch" \
  --metrics "$OUT/m.jsonl"
check_final_accuracy "$OUT/m.jsonl" 0.8

# Parity: a global batch that splits evenly over n ranks, and a training set
# of whole batches, so that the sampler gives 1 and n ranks the same rows in
# every step. 10 steps keep float rounding differences far below 1e-4.
batch=$((64 * n))
rows=$((10 * batch))
for ranks in 1 "$n"; do
  echo "== parity run on $ranks GPU(s): $rows rows, global batch $batch"
  "$agent" --nproc "$ranks" -- "$trainer" --device cuda --model mlp --data "$data" --epochs 1 \
    --batch-size "$batch" --limit-train "$rows" --limit-test 1000 --dump-params "$OUT/params-$ranks.bin"
done
/usr/bin/python3 -c '
import struct, sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
if len(a) != len(b) or len(a) % 4 or not a: sys.exit("parameter files differ in size or are empty: %d and %d bytes" % (len(a), len(b)))
n = len(a) // 4
d = max(abs(x - y) for x, y in zip(struct.unpack("<%df" % n, a), struct.unpack("<%df" % n, b)))
print("1 GPU vs %s GPUs: max abs difference %.3g over %d parameters (need <= 1e-4)" % (sys.argv[3], d, n))
sys.exit(0 if d <= 1e-4 else 1)' "$OUT/params-1.bin" "$OUT/params-$n.bin" "$n"
echo "multi-gpu: PASS"
