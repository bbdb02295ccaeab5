#!/usr/bin/env bash
# Privilege hygiene: the plugin runs inside slurmstepd (root) on every node.
#  - The agent and the workers run as the job's user, real, effective and saved
#    ids alike (jobs of a non-root user: nobody).
#  - Nothing from the user's environment has an effect on the root side:
#    hwloc variables do not change the plan (hwloc sees slurmstepd's own
#    environment, not the job's), LD_PRELOAD reaches only the user's own
#    processes, PATH and variables that look like they name an agent do not
#    change which agent runs (only plugstack.conf and the site config do).
#  - A value quoted in a message cannot forge a line in slurmd's log.
#  - The workers get descriptors 0, 1 and 2 only, in either shape.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
agent=${1:?path of the ddp-agent that plugstack.conf names}
topologies=${2:?directory of hwloc XML topologies}
user=nobody
uid=$(id -u "$user") gid=$(id -g "$user")
want="$uid $uid $uid $uid/$gid $gid $gid $gid"  # real effective saved fs, for uid and gid

# The user must reach the build (or the installed files): a checkout below a
# private directory (/root) leaves nothing to test. 77: CTest's skip.
plugin=$(awk '$1 == "required" || $1 == "optional" { print $2; exit }' "$CLUSTER_DIR/plugstack.conf")
for file in "$agent" "$plugin"; do
  [[ -z $file ]] || runuser -u "$user" -- test -r "$file" || {
    echo "SKIP: $user cannot read $file (is the checkout below a private directory?)"
    exit 77
  }
done

# The user's files: readable by them, outside root's private $WORK.
chmod 755 "$WORK"
mkdir -m 1777 "$WORK/marks"
cat >"$WORK/ids.sh" <<'EOF'
#!/bin/sh
# This process's and its parent's ids (real, effective, saved, fs), the parent's name and binary.
ids() { awk '/^Uid:/ { u = $2 " " $3 " " $4 " " $5 } /^Gid:/ { g = $2 " " $3 " " $4 " " $5 } END { print u "/" g }' "$1"; }
echo "self=$(ids /proc/$$/status) parent=$(ids /proc/$PPID/status) comm=$(cat /proc/$PPID/comm) exe=$(readlink /proc/$PPID/exe)"
EOF
chmod 755 "$WORK/ids.sh"

# as_user ARGS...: srun/sbatch as the unprivileged user, from a directory they can read.
as_user() { run runuser -u "$user" -- env -C / SLURM_CONF="$SLURM_CONF" "$@"; }

# --- the agent and the workers run as the job's user --------------------------
as_user srun -N2 --ddp=cpu --ddp-procs=2 "$WORK/ids.sh"
expect_rc 0 "agent shape as $user"
expect_eq "$(wc -l <<<"$OUT")" "4" "four workers"
expect_eq "$(sort -u <<<"$OUT")" "self=$want parent=$want comm=ddp-agent exe=$agent" \
  "workers and their agent run as $user (uid/gid real, effective, saved, fs), the agent is plugstack.conf's"

as_user srun -N1 -n2 --ddp=cpu "$WORK/ids.sh"
expect_rc 0 "task shape as $user"
expect_eq "$(sed 's/ parent=.*//' <<<"$OUT" | sort -u)" "self=$want" "each task (one worker) runs as $user"

# --- the workers hold no descriptor but 0, 1 and 2 ------------------------------
# Nothing of slurmstepd's, the plugin's or the agent's reaches the user's
# programs (ddp/node/descriptors.hpp): each worker lists its own descriptors,
# the one ls opens to read them aside.
extra_fds() { awk '/ -> / && $(NF-2) !~ /^[012]$/ && $NF !~ /^\/proc\/[0-9]+\/fd$/' <<<"$OUT"; }
as_user srun -N2 --ddp=cpu --ddp-procs=2 ls -l /proc/self/fd
expect_rc 0 "agent shape: workers list their descriptors"
expect_eq "$(grep -c ' 2 -> ' <<<"$OUT")" "4" "four workers listed theirs"
expect_eq "$(extra_fds)" "" "descriptors an agent-shape worker holds beyond 0, 1 and 2"
as_user srun -N1 -n2 --ddp=cpu ls -l /proc/self/fd
expect_rc 0 "task shape: workers list their descriptors"
expect_eq "$(grep -c ' 2 -> ' <<<"$OUT")" "2" "two tasks listed theirs"
expect_eq "$(extra_fds)" "" "descriptors a task-shape worker holds beyond 0, 1 and 2"

# --- a hostile environment has no root-side effect ----------------------------
# Baselines without it: the binding plan, computed in slurmstepd (user_init).
as_user srun -N1 -n2 --ddp=cpu --ddp-verbose true
expect_rc 0 "task shape baseline"
task_plan=$(grep 'ddp: node 0 worker' <<<"$ERR" | sort)
[[ $task_plan == *cpus* ]] || { show "baseline"; fail "the baseline plan binds no CPUs, so it cannot show a change"; }
as_user srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose true
expect_rc 0 "agent shape baseline"
agent_plan=$(grep 'rank [0-9]*: cpus' <<<"$ERR" | sort)
[[ -n $agent_plan ]] || { show "baseline"; fail "no per-rank plan in the agent's summary"; }

# What hwloc would make of these variables, were they in its environment: the
# control, so that an unchanged plan below means something.
xml=$topologies/2s-16c-3xM2075-mlx5.xml
real_cores=$(hwloc-calc --number-of core all)
fake_cores=$(HWLOC_XMLFILE=$xml HWLOC_THISSYSTEM=1 hwloc-calc --number-of core all)
[[ $real_cores != "$fake_cores" ]] || fail "control: HWLOC_XMLFILE=$xml gives this machine's own core count ($real_cores)"

# An LD_PRELOAD library that records who loaded it, and a fake agent first in PATH.
cat >"$WORK/mark.c" <<EOF
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char comm[64] = "?", line[160];
  int fd = open("/proc/self/comm", O_RDONLY);
  if (fd >= 0) { ssize_t n = read(fd, comm, sizeof comm - 1); comm[n > 0 ? n - 1 : 0] = 0; close(fd); }
  fd = open("$WORK/marks/log", O_WRONLY | O_APPEND | O_CREAT, 0666);
  if (fd < 0) return;
  int len = snprintf(line, sizeof line, "uid=%u euid=%u comm=%s\n", getuid(), geteuid(), comm);
  if (write(fd, line, (size_t)len) < 0) {}
  close(fd);
}
EOF
cc -shared -fPIC -o "$WORK/mark.so" "$WORK/mark.c" || fail "cannot build the LD_PRELOAD probe (cc)"
chmod 755 "$WORK/mark.so"
mkdir -m 755 "$WORK/evil"
printf '#!/bin/sh\ntouch %s/marks/fake-agent-ran\nexec "$@"\n' "$WORK" >"$WORK/evil/ddp-agent"
chmod 755 "$WORK/evil/ddp-agent"
fake=$WORK/evil/ddp-agent
hostile=(env "PATH=$WORK/evil:$PATH" "DDP_AGENT=$fake" "DDP_AGENT_PATH=$fake" "SLURM_DDP_AGENT=$fake"
  "SPANK_DDP_AGENT=$fake" "SLURM_SPANK__SLURM_SPANK_OPTION_ddp_agent=$fake" "DDP_CONFIG=$WORK/ddp.conf"
  "SLURM_DDP_CONFIG=$WORK/ddp.conf")
export_hostile="--export=ALL,LD_PRELOAD=$WORK/mark.so,HWLOC_XMLFILE=$xml,HWLOC_THISSYSTEM=1,HWLOC_FSROOT=$WORK/evil"
export_hostile+=",HWLOC_COMPONENTS=xml,HWLOC_PLUGINS_PATH=$WORK/evil,HWLOC_SYNTHETIC=pack:4 core:8 pu:2"
printf 'Agent=%s\n' "$fake" >"$WORK/ddp.conf"

as_user "${hostile[@]}" srun -N1 -n2 --ddp=cpu --ddp-verbose "$export_hostile" true
expect_rc 0 "task shape, hostile environment"
expect_eq "$(grep 'ddp: node 0 worker' <<<"$ERR" | sort)" "$task_plan" "hwloc variables of the job do not change the plan"

as_user "${hostile[@]}" srun -N2 --ddp=cpu --ddp-procs=2 --ddp-verbose "$export_hostile" "$WORK/ids.sh"
expect_rc 0 "agent shape, hostile environment"
expect_eq "$(grep 'rank [0-9]*: cpus' <<<"$ERR" | sort)" "$agent_plan" "hwloc variables do not change the agents' plan"
expect_eq "$(sort -u <<<"$OUT")" "self=$want parent=$want comm=ddp-agent exe=$agent" \
  "PATH and agent-like variables do not choose the agent"
[[ ! -e $WORK/marks/fake-agent-ran ]] || fail "the fake ddp-agent from the user's PATH ran"
marks=$(cat "$WORK/marks/log" 2>/dev/null || true)
expect_in "$marks" "uid=$uid euid=$uid comm=ddp-agent" "control: the job's LD_PRELOAD reaches the user's agent"
expect_eq "$(grep -v "^uid=$uid euid=$uid " <<<"$marks" || true)" "" "LD_PRELOAD loaded only into $user's processes"

# Which environment hwloc sees in slurmstepd: its own (slurmd's), not the job's.
as_user "${hostile[@]}" srun -N1 --ddp=cpu "$export_hostile" sleep 5 >/dev/null 2>&1 &
job=$!
deadline=$((SECONDS + 20)) stepd='' worker=''
while ((SECONDS < deadline)) && [[ -z $worker ]]; do
  sleep 0.3
  worker=$(node_processes "^sleep 5" | head -n 1)
done
[[ -n $worker ]] || fail "the step's worker did not start"
grep -qz "^HWLOC_XMLFILE=$xml\$" "/proc/$worker/environ" || fail "control: the worker's environment lacks HWLOC_XMLFILE"
for pid in $(node_processes "^slurmstepd"); do
  ! grep -qz '^HWLOC_\|^LD_PRELOAD=' "/proc/$pid/environ" || fail "slurmstepd $pid has the job's HWLOC_*/LD_PRELOAD"
  stepd=$pid
done
[[ -n $stepd ]] || fail "no slurmstepd found"
wait_exit "$job" 30

# --- messages cannot forge slurmd log lines -----------------------------------
token="forged-$$-$RANDOM"
as_user srun -N1 --ddp=cpu "--export=ALL,SDDP_RESTARTS=1
$token error: a forged line" true
expect_failure "an SDDP_* value with a newline"
expect_in "$ERR" "SDDP_RESTARTS='1\\n$token" "the newline is shown escaped"
log=$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log
grep -q "SDDP_RESTARTS='1\\\\n$token" "$log" || fail "the error is not in $log"
! grep -q "^$token" "$log" || fail "a user's value started a line of its own in $log"

# An option naming an agent does not exist.
as_user srun -N1 --ddp=cpu --ddp-agent="$fake" true
expect_failure "--ddp-agent is no option"
pass "privileges: the job's user runs everything, the user's environment has no root-side effect"
