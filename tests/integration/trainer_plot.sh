#!/usr/bin/env bash
# --metrics writes JSON Lines (one record per epoch, a final one) that
# ddp-train-plot turns into a PNG; a file with no epochs is refused.
set -euo pipefail
train=${1:?path to ddp-train}
plot=${2:?path to ddp-train-plot}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$train" --model linear --data synthetic --synthetic-rows 1024 --epochs 3 --batch-size 32 \
  --metrics "$work/m.jsonl" >/dev/null
[[ $(grep -c '"event":"epoch"' "$work/m.jsonl") == 3 ]] || { cat "$work/m.jsonl"; fail "expected 3 epoch records"; }
grep -q '"event":"final","world_size":1,"epochs":3' "$work/m.jsonl" || fail "no final record"
/usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/m.jsonl" \
  || fail "metrics are not JSON Lines"
"$plot" "$work/m.jsonl" "$work/m.png" >/dev/null
[[ $(head -c 4 "$work/m.png" | od -An -c | tr -d ' ') == '211PNG' ]] || fail "no PNG written"
echo '{"event":"final"}' >"$work/empty.jsonl"
if "$plot" "$work/empty.jsonl" "$work/e.png" 2>"$work/err"; then fail "a file without epochs was plotted"; fi
grep -q "no epoch records" "$work/err" || fail "no clear message for a file without epochs"
echo "PASS: metrics are JSON Lines and plot to PNG"
