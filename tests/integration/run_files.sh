#!/usr/bin/env bash
# Another user on a shared node against the agent's run files (error and
# progress files), without Slurm: a standalone agent as root (the victim) with
# the hang watch on, TMPDIR a sticky world-writable folder like /tmp.
#
# 1. Before the agent starts, another user (nobody) plants the directories an
#    agent would have used under a predictable name (TMPDIR/ddp-agent-UID-PID,
#    for each of the next PIDs), with links to a victim's file as the progress
#    and error files. The victim's file must stay intact and the job end with
#    0. (Before the private directory, the agent truncated the victim's file
#    through the link, and the job ended 0 all the same.)
# 2. While the job runs, its directory is the victim's alone (mode 0700); a
#    failed run keeps it for the post-mortem, and the other user can read
#    nothing in it; a run that ends well removes it.
# 3. No directory can be made (TMPDIR missing): with the hang watch the agent
#    stops at once, naming TMPDIR; without it, it warns and runs.
#
#   run_files.sh AGENT
set -euo pipefail
agent=${1:?path to ddp-agent}
PY=/usr/bin/python3
mallory=nobody
work=$(mktemp -d)
chmod 0755 "$work"  # the other user must reach the node's /tmp inside
cleanup() { if [[ -n ${KEEP_WORK:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
show() { local f; for f in "$@"; do echo "--- $f:" >&2; tail -n 30 "$f" >&2 || true; done; }

tmp=$work/tmp  # the node's /tmp
mkdir -m 1777 "$tmp"
mkdir -m 0755 "$work/home"
victim=$work/home/precious
echo "the victim's data" >"$victim"

# --- 1. Links planted at the names the next PIDs would give -----------------
planted=3000
first=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
runuser -u "$mallory" -- "$PY" - "$tmp" "$first" "$planted" "$victim" <<'PY'
import os, sys
tmp, first, count, victim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for pid in range(first, first + count):
    rank_dir = f"{tmp}/ddp-agent-0-{pid}/attempt_0/rank_0"
    os.makedirs(rank_dir, mode=0o777)
    for name in ("progress", "error.json"):
        os.symlink(victim, f"{rank_dir}/{name}")
PY
set +e
TMPDIR=$tmp timeout 60 "$agent" --nproc 1 --hang-timeout 5 -- /bin/sh -c \
  'touch "$DDP_PROGRESS_FILE"; sleep 1; touch "$DDP_PROGRESS_FILE"; echo "pid $PPID done"' >"$work/planted.out" 2>"$work/planted.err"
rc=$?
set -e
agent_pid=$(sed -n 's/.*pid \([0-9]*\) done$/\1/p' "$work/planted.out")
[[ -n $agent_pid ]] || { show "$work"/planted.*; fail "the worker never ran (agent rc $rc)"; }
((agent_pid >= first && agent_pid < first + planted)) ||
  fail "the agent's pid $agent_pid is outside the planted range $first..$((first + planted - 1)): nothing was tested"
[[ $(cat "$victim") == "the victim's data" ]] ||
  { show "$work"/planted.*; fail "the victim's file was written through the planted link (now: '$(head -c 80 "$victim")')"; }
[[ $rc == 0 ]] || { show "$work"/planted.*; fail "the job beside the planted links ended $rc"; }
pass "links planted for PIDs $first..$((first + planted - 1)) (the agent was $agent_pid): the victim's file intact, job rc 0"

# --- 2. The directory is the victim's alone; kept after a failure ------------
before=$(ls "$tmp")
set +e
TMPDIR=$tmp timeout 60 "$agent" --nproc 1 --hang-timeout 5 -- /bin/sh -c \
  'stat -c "%a %U" "$(dirname "$(dirname "$(dirname "$DDP_PROGRESS_FILE")")")";
   echo "{\"message\": \"secret traceback\"}" >"$TORCHELASTIC_ERROR_FILE"; exit 3' >"$work/failed.out" 2>"$work/failed.err"
rc=$?
set -e
[[ $rc == 3 ]] || { show "$work"/failed.*; fail "a worker that exits 3: the agent ended $rc"; }
mode=$(sed -n 's/^\[rank 0\] \([0-7]* [a-z]*\)$/\1/p' "$work/failed.out")
[[ $mode == "700 root" ]] || { show "$work"/failed.*; fail "the run's directory while it ran: '$mode', expected '700 root'"; }
kept=$(comm -13 <(echo "$before") <(ls "$tmp"))
[[ $(wc -l <<<"$kept") == 1 && $kept == ddp-agent-0-* ]] || fail "a failed run should keep one directory; new in TMPDIR: '$kept'"
[[ -s $tmp/$kept/attempt_0/rank_0/error.json ]] || fail "the failed run's error file is gone"
if runuser -u "$mallory" -- cat "$tmp/$kept/attempt_0/rank_0/error.json" >/dev/null 2>&1; then
  fail "another user can read the failed run's error file"
fi
TMPDIR=$tmp timeout 60 "$agent" --nproc 1 --hang-timeout 5 -- true >/dev/null 2>"$work/well.err" ||
  { show "$work/well.err"; fail "a run that ends well failed"; }
[[ $(comm -13 <(echo "$before") <(ls "$tmp")) == "$kept" ]] || fail "a run that ended well left its directory behind"
pass "the run's directory is 0700 root's: kept after a failure (unreadable to $mallory), removed after success"

# --- 3. No directory can be made -----------------------------------------------
set +e
TMPDIR=$work/missing timeout 20 "$agent" --nproc 1 --hang-timeout 5 -- true >/dev/null 2>"$work/missing.err"
rc=$?
set -e
[[ $rc == 1 ]] && grep -q "TMPDIR.*hang watch needs it.*point TMPDIR at" "$work/missing.err" ||
  { show "$work/missing.err"; fail "hang watch without a private directory: rc $rc, expected 1 naming TMPDIR"; }
TMPDIR=$work/missing timeout 20 "$agent" --nproc 1 -- true >/dev/null 2>"$work/nowatch.err" ||
  { show "$work/nowatch.err"; fail "without the hang watch, a missing TMPDIR must not stop the job"; }
grep -q "no TORCHELASTIC_ERROR_FILE" "$work/nowatch.err" || { show "$work/nowatch.err"; fail "no warning"; }
pass "TMPDIR missing: with the hang watch, rc 1 naming TMPDIR; without it, a warning and rc 0"
