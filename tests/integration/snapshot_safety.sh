#!/usr/bin/env bash
# A snapshot write interrupted at any point never costs the previous good
# snapshot: ddp-train SIGKILLed half-way through writing one, or after syncing
# it but before the rename, resumes from the one before and ends with exactly
# the parameters of an uninterrupted run; a full disk (a 3 MiB tmpfs: room
# for one snapshot, not two) makes later writes fail with a warning while
# training goes on, and the first snapshot stays good.
set -euo pipefail
train=${1:?path to ddp-train}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
cleanup() { mountpoint -q "$work/full" && umount "$work/full"; rm -rf "$work"; }
trap cleanup EXIT
base=(--model mlp --data /usr/share/datasets/fashion-mnist --limit-train 1024 --limit-test 500 --batch-size 64)
args=("${base[@]}" --epochs 3)
shopt -s nullglob dotglob
temporaries() { local f=("$1"/.*.tmp); echo "${#f[@]}"; }

"$train" "${args[@]}" --dump-params "$work/clean" >/dev/null

for stage in write rename; do
  dir=$work/snaps-$stage
  set +e
  "$train" "${args[@]}" --snapshot-dir "$dir" --crash-in-snapshot 2 --crash-stage "$stage" >"$work/out" 2>&1
  rc=$?
  set -e
  [[ $rc == 137 ]] || { cat "$work/out"; fail "$stage: expected death by SIGKILL (137), got $rc"; }
  [[ -e $dir/.snapshot-000000000032.ddps.tmp ]] || { ls -a "$dir"; fail "$stage: no temporary left"; }
  [[ ! -e $dir/snapshot-000000000032.ddps ]] || fail "$stage: the interrupted snapshot looks committed"
  "$train" "${args[@]}" --snapshot-dir "$dir" --dump-params "$work/resumed-$stage" >"$work/out" 2>&1 \
    || { cat "$work/out"; fail "$stage: the run after the crash failed"; }
  grep -q "resuming from $dir/snapshot-000000000016.ddps" "$work/out" \
    || { cat "$work/out"; fail "$stage: did not resume from the snapshot before the crash"; }
  cmp -s "$work/clean" "$work/resumed-$stage" || fail "$stage: resumed run ended with other parameters"
  [[ $(temporaries "$dir") == 0 ]] || fail "$stage: the stale temporary was not cleaned up"
  echo "$stage: killed mid-snapshot, resumed from the previous one, same parameters"
done

# Disk full: the first snapshot (about 1.9 MB) fits, the second does not.
mkdir "$work/full"
mount -t tmpfs -o size=3m tmpfs "$work/full"
"$train" "${args[@]}" --snapshot-dir "$work/full" >"$work/out" 2>&1 || { cat "$work/out"; fail "disk full: training stopped"; }
grep -q "warning: snapshot not saved: writing .* failed: No space left on device; the previous snapshot is kept" "$work/out" \
  || { cat "$work/out"; fail "disk full: no warning naming the problem"; }
[[ $(temporaries "$work/full") == 0 ]] || fail "disk full: a partial temporary was left"
"$train" "${base[@]}" --epochs 4 --snapshot-dir "$work/full" --save-every 0 >"$work/out" 2>&1 \
  || { cat "$work/out"; fail "disk full: resuming failed"; }
grep -q "resuming from $work/full/snapshot-000000000016.ddps" "$work/out" \
  || { cat "$work/out"; fail "disk full: the first snapshot is not intact"; }
echo "PASS: interrupted and failed snapshot writes never cost the previous snapshot"
