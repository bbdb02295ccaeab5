#!/usr/bin/env bash
# ddp-train is a worker like any other: under Debian's torchrun (c10d
# rendezvous; 1.13 on Python 3.11 needs --redirects/--tee and underscore
# flags) and under ddp-agent without Slurm. It refuses torchrun's static
# rendezvous, whose store owns MASTER_PORT, with the fix in the message.
# Debian's PyTorch 2.x is built without libuv, and its torchrun cannot start
# its store at all: there the test checks that it is torchrun that fails, and
# why, and runs the ddp-agent part.
set -euo pipefail
train=${1:?path to ddp-train}
agent=${2:?path to ddp-agent}
args=(--model linear --data synthetic --synthetic-rows 4096 --epochs 3 --batch-size 64 --lr 0.05)
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

torchrun_works=1
/usr/bin/python3 -c 'import torch.distributed as d; d.TCPStore("127.0.0.1", 0, 1, True, multi_tenant=True)' \
  2>/dev/null || torchrun_works=0
if ((!torchrun_works)); then
  set +e
  out=$(timeout 60 torchrun --standalone --nproc_per_node=1 --no_python "$train" "${args[@]}" 2>&1)
  rc=$?
  set -e
  ((rc != 0)) || fail "torchrun ran although this PyTorch cannot start a TCPStore"
  grep -q "libuv" <<<"$out" || { echo "$out"; fail "torchrun failed, but not for want of libuv"; }
  out=$(timeout 120 "$agent" --nproc 2 -- "$train" "${args[@]}" --metrics "$work/a.jsonl" 2>&1) \
    || { echo "$out"; fail "ddp-train under ddp-agent"; }
  grep -q '"world_size":2' "$work/a.jsonl" || { echo "$out"; fail "ddp-agent: no 2-rank final record"; }
  echo "PASS: ddp-train under ddp-agent; this PyTorch's torchrun cannot start (built without libuv)"
  exit 0
fi

out=$(timeout 120 torchrun --standalone --nproc_per_node=2 --redirects 9:0 --tee 9:0 --no_python \
  "$train" "${args[@]}" --metrics "$work/t.jsonl" 2>&1) || { echo "$out"; fail "ddp-train under torchrun"; }
grep -q '"world_size":2' "$work/t.jsonl" || { echo "$out"; fail "torchrun: no 2-rank final record"; }
mse=$(sed -n 's/.*"event":"final".*"test_mse":\([0-9.e-]*\).*/\1/p' "$work/t.jsonl")
awk -v m="$mse" 'BEGIN { exit !(m < 0.01) }' || fail "torchrun: linear regression test MSE $mse, expected < 0.01"

out=$(timeout 120 "$agent" --nproc 2 -- "$train" "${args[@]}" --metrics "$work/a.jsonl" 2>&1) \
  || { echo "$out"; fail "ddp-train under ddp-agent"; }
grep -q '"world_size":2' "$work/a.jsonl" || { echo "$out"; fail "ddp-agent: no 2-rank final record"; }

set +e
out=$(timeout 60 torchrun --nnodes=1 --nproc_per_node=1 --master_port=29631 --redirects 9:0 --tee 9:0 \
  --no_python "$train" "${args[@]}" 2>&1)
set -e
grep -q -- "--rdzv_backend=c10d" <<<"$out" || { echo "$out"; fail "static rendezvous: no hint at c10d"; }
echo "PASS: ddp-train under torchrun (c10d) and ddp-agent (test MSE $mse); static rendezvous refused"
