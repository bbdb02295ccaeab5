#!/usr/bin/env bash
# Another user on a shared node against the agent's run files (error and
# progress files), without Slurm: a standalone agent as root (the victim) with
# the hang watch on, TMPDIR a sticky world-writable folder like /tmp.
#
# 1. Before the agent starts, another user (useradd -r) plants the directories
#    an agent would have used under a predictable name (TMPDIR/ddp-agent-UID-PID,
#    for each of the next PIDs), with links to a victim's file, or FIFOs, as
#    the progress and error files. The victim's file must stay intact and the
#    job end with 0. (An agent writing at those names would truncate the
#    victim's file through the link and end 0 all the same, and hang in
#    open() on a FIFO.) The same user makes a shared --log-dir first,
#    with a link as rank 0's log: refused, the victim's file intact.
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
# The other user: a system account of the test's own (useradd -r), as on a
# node where several users' jobs share the machine.
mallory=ddp-mallory
id -u "$mallory" >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$mallory"
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

# --- 1. Links and FIFOs planted at the names the next PIDs would give --------
# plant KIND: as the other user, for each of the next 3,000 PIDs, the folders
# an agent of root's would have used, with links to the victim's file (KIND
# links) or FIFOs (KIND fifos) as its progress and error files; then the job.
planted=3000
plant() {
  local kind=$1 rc agent_pid first
  first=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
  runuser -u "$mallory" -- "$PY" - "$tmp" "$first" "$planted" "$victim" "$kind" >"$work/$kind.pids" <<'PY'
import os, sys
tmp, first, count, victim, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
pid_max = int(open("/proc/sys/kernel/pid_max").read())
for i in range(count):
    pid = first + i
    if pid > pid_max:  # the kernel goes on from 300 (RESERVED_PIDS)
        pid = 300 + pid - pid_max - 1
    print(pid)
    rank_dir = f"{tmp}/ddp-agent-0-{pid}/attempt_0/rank_0"
    os.makedirs(rank_dir, mode=0o777, exist_ok=True)
    for name in ("progress", "error.json"):
        path = f"{rank_dir}/{name}"
        if os.path.lexists(path):
            os.unlink(path)
        if kind == "links":
            os.symlink(victim, path)
        else:
            os.mkfifo(path, 0o666)
PY
  set +e
  TMPDIR=$tmp timeout -k 5 30 "$agent" --nproc 1 --hang-timeout 5 -- /bin/sh -c \
    'touch "$DDP_PROGRESS_FILE"; sleep 1; touch "$DDP_PROGRESS_FILE"; echo "pid $PPID done"' >"$work/$kind.out" 2>"$work/$kind.err"
  rc=$?
  set -e
  [[ $rc != 124 && $rc != 137 ]] || { show "$work/$kind".*; fail "planted $kind: the agent hung (killed after 30 s)"; }
  agent_pid=$(sed -n 's/.*pid \([0-9]*\) done$/\1/p' "$work/$kind.out")
  [[ -n $agent_pid ]] || { show "$work/$kind".*; fail "planted $kind: the worker never ran (agent rc $rc)"; }
  grep -qx "$agent_pid" "$work/$kind.pids" ||
    fail "planted $kind: the agent's pid $agent_pid is not among the $planted planted from $first: nothing was tested"
  [[ $(cat "$victim") == "the victim's data" ]] ||
    { show "$work/$kind".*; fail "planted $kind: the victim's file was written through a link (now: '$(head -c 80 "$victim")')"; }
  [[ $rc == 0 ]] || { show "$work/$kind".*; fail "planted $kind: the job ended $rc"; }
  pass "$kind planted by $mallory for the $planted PIDs from $first (the agent was $agent_pid): the victim's file intact, job rc 0"
}
plant links
plant fifos

# A --ddp-log-dir in a shared folder that the other user made first, with a
# link to the victim's file as rank 0's log: the log is refused, said once, and
# the output still reaches the terminal.
runuser -u "$mallory" -- sh -c "mkdir -m 0777 '$tmp/logs' && ln -s '$victim' '$tmp/logs/rank-0.out'"
TMPDIR=$tmp timeout 30 "$agent" --nproc 1 --log-dir "$tmp/logs" -- echo "to the log" >"$work/logs.out" 2>"$work/logs.err" ||
  { show "$work"/logs.*; fail "a planted log link: the job failed"; }
[[ $(cat "$victim") == "the victim's data" ]] || fail "the worker's output went through the planted log link into the victim's file"
grep -q "cannot use the log file $tmp/logs/rank-0.out" "$work/logs.err" && grep -q "to the log" "$work/logs.out" ||
  { show "$work"/logs.*; fail "a planted log link: expected one warning and the output on the terminal"; }
pass "a link planted in a shared --log-dir: refused with a warning, the victim's file intact"

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

# A failure that names no error file, and a run stopped by a signal (Slurm's
# SIGTERM: scancel, preemption, a time limit): nothing for the root cause to
# point at, nothing kept.
TMPDIR=$tmp timeout 60 "$agent" --nproc 1 -- /bin/sh -c 'exit 3' >/dev/null 2>"$work/plain.err" && rc=0 || rc=$?
[[ $rc == 3 ]] || { show "$work/plain.err"; fail "a worker that exits 3 without an error file: the agent ended $rc"; }
[[ $(comm -13 <(echo "$before") <(ls "$tmp")) == "$kept" ]] || fail "a failure without an error file left its directory"
TMPDIR=$tmp "$agent" --nproc 2 -- sleep 300 >/dev/null 2>"$work/stopped.err" &
agent_pid=$!
deadline=$((SECONDS + 30))
until [[ $(pgrep -c -P "$agent_pid" -x sleep) == 2 ]]; do
  ((SECONDS < deadline)) || { kill "$agent_pid"; fail "the stopped run's workers did not start"; }
  sleep 0.1
done
kill -TERM "$agent_pid"
wait "$agent_pid" && rc=0 || rc=$?
[[ $rc == 143 ]] || { show "$work/stopped.err"; fail "an agent stopped by SIGTERM ended $rc, expected 143"; }
[[ $(comm -13 <(echo "$before") <(ls "$tmp")) == "$kept" ]] || fail "a run stopped by SIGTERM left its directory"
pass "a failure without an error file and a run stopped by SIGTERM leave no directory"

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
