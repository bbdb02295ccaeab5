#!/usr/bin/env bash
# packaging/install-deps.sh on a machine whose Slurm daemons run and are
# enabled: in either mode it stops, disables, restarts or masks no service
# and installs its mode's packages; while apt-get runs no daemon may start (a
# policy-rc.d of its own answering 101, gone afterwards; a site's own left as
# it was); it refuses the test mode beside a Slurm that is not Debian's, uses
# a site's Slurm headers (DDP_SLURM_PREFIX) instead of installing Debian's,
# wants a mode, and a second run installs nothing. Before it installs, the
# plan: no removal, no upgrade of a package that ships a service (a systemd
# unit or an init script), no upgrade of Slurm's or munge's packages under
# their installed daemons (an ordinary library's upgrade, or libslurm's with
# no daemon, proceeds). Debian's Slurm installed without its headers:
# libslurm-dev of that very version, or a refusal where the archive lacks it.
# One run at a time: a second waits for the first's lock.
#
#   tests/package/install_deps_safe.sh [SCRIPT]   # SCRIPT: another install-deps.sh (default: this tree's)
#
# Nothing on the machine is installed, started or written: stand-ins first on
# PATH (systemctl: every call recorded, slurmctld and slurmd active and
# enabled; apt-get: records what it would install and what policy-rc.d says
# then; dpkg-query: the packages, versions, files and file owners each case
# sets up), and, in a private mount namespace, empty tmpfs over /usr/sbin,
# /usr/local, /usr/include and the lock's folder (/run/lock, else /run),
# where each case puts its Slurm, policy-rc.d and lock. Needs root or user
# namespaces (exits 77, skipped, without either). Seconds.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
script=$(realpath "${1:-$src/packaging/install-deps.sh}")

# The outer mount namespace, passed to the inner run: the tmpfs mounts below
# are made only in another one.
outer=$(readlink /proc/self/ns/mnt)
if [[ -z ${DDP_INSTALL_DEPS_TEST_NS:-} ]]; then
  if [[ $(id -u) -eq 0 ]] && unshare --mount true 2>/dev/null; then
    ns=(unshare --mount --propagation private)
  elif unshare --user --map-root-user --mount true 2>/dev/null; then
    ns=(unshare --user --map-root-user --mount --propagation private)
  else
    echo "install_deps_safe: SKIP: needs root or user namespaces for a private mount namespace" >&2
    exit 77
  fi
  DDP_INSTALL_DEPS_TEST_NS=$outer exec "${ns[@]}" "$0" "$script"
fi

# In the private mount namespace from here on.
[[ $DDP_INSTALL_DEPS_TEST_NS != "$outer" ]] || { echo "install_deps_safe: not in a mount namespace of its own" >&2; exit 1; }
work=$(mktemp -d /tmp/install-deps-safe.XXXXXX)
trap 'rm -rf "$work"' EXIT
# install-deps.sh's lock: in /run/lock, or /run where that is missing.
lockdir=/run/lock
[[ -d $lockdir ]] || lockdir=/run
lockfile=$lockdir/slurm-ddp-install-deps.lock
tmpfs_dirs=(/usr/sbin /usr/local /usr/include "$lockdir")
for d in "${tmpfs_dirs[@]}"; do mount -t tmpfs -o mode=755 tmpfs "$d"; done
bin=$work/bin state=$work/state
mkdir -p "$bin" "$state"

# The stand-ins; each reads and writes $state.
cat >"$bin/systemctl" <<EOF
#!/bin/bash
state=$state
EOF
cat >>"$bin/systemctl" <<'EOF'
echo "$*" >>"$state/systemctl"
case " $* " in
  *" is-active "*) echo active ;;
  *" is-enabled "*) echo enabled ;;
  *" is-system-running "*) echo running ;;
esac
EOF
cat >"$bin/apt-get" <<EOF
#!/bin/bash
state=$state
EOF
cat >>"$bin/apt-get" <<'EOF'
echo "$*" >>"$state/apt-get"
[[ " $* " == *" install "* ]] || exit 0
if [[ " $* " == *" -s "* ]]; then
  # The simulation: each package new (PACKAGE=VERSION: that version, unless
  # $state/unavailable lists it), then what the case adds ($state/plan).
  seen=0
  for a in "$@"; do
    [[ $a == install ]] && { seen=1; continue; }
    ((seen)) && [[ $a != -* ]] || continue
    if grep -qxF "$a" "$state/unavailable" 2>/dev/null; then
      echo "E: Version '${a#*=}' for '${a%%=*}' was not found" >&2
      exit 100
    fi
    version=1.0
    [[ $a != *=* ]] || version=${a#*=}
    echo "Inst ${a%%=*} ($version Debian:12.11/stable [amd64])"
  done
  cat "$state/plan" 2>/dev/null
  exit 0
fi
if [[ -e /usr/sbin/policy-rc.d ]]; then
  rc=0
  /usr/sbin/policy-rc.d slurmd start >/dev/null 2>&1 || rc=$?
  echo "$rc" >>"$state/policy"
else
  echo none >>"$state/policy"
fi
seen=0
for a in "$@"; do
  [[ $a == install ]] && { seen=1; continue; }
  ((seen)) && [[ $a != -* ]] && echo "$a" >>"$state/installed"
done
exit 0
EOF
cat >"$bin/dpkg-query" <<EOF
#!/bin/bash
state=$state
EOF
cat >>"$bin/dpkg-query" <<'EOF'
# -S PATH: the owners the case set up under the tmpfs folders and $state;
# elsewhere (/usr/bin/srun) the machine's own dpkg-query answers.
rc=0
if [[ $1 == -S ]]; then
  shift
  for p in "$@"; do
    o=$(awk -v p="$p" '$1 == p { print $2 }' "$state/owners")
    if [[ -n $o ]]; then
      echo "$o: $p"
    elif [[ $p == /usr/sbin/* || $p == /usr/local/* || $p == /usr/include/* || $p == /tmp/* ]]; then
      echo "dpkg-query: no path found matching pattern $p" >&2; rc=1
    else
      /usr/bin/dpkg-query -S "$p" 2>/dev/null || { echo "dpkg-query: no path found matching pattern $p" >&2; rc=1; }
    fi
  done
  exit $rc
fi
# -L PACKAGE: "/." and the files $state/files gives it ("PACKAGE PATH" lines).
if [[ $1 == -L ]]; then
  grep -qxF "$2" "$state/missing" && { echo "dpkg-query: package '$2' is not installed" >&2; exit 1; }
  echo /.
  awk -v p="$2" '$1 == p { print $2 }' "$state/files" 2>/dev/null
  exit 0
fi
# -W [-f=FORMAT|-f FORMAT|--showformat=FORMAT] PACKAGE...: installed but those
# in $state/missing, at the version $state/versions gives ("PACKAGE VERSION"), else 1.0.
[[ $1 == -W || $1 == --show ]] || { echo "dpkg-query stand-in: $* not handled" >&2; exit 2; }
shift
fmt='${Package}\t${Version}\n'
case $1 in
  -f=* | --showformat=*) fmt=${1#*=}; shift ;;
  -f | --showformat) fmt=$2; shift 2 ;;
esac
for p in "$@"; do
  if grep -qxF "$p" "$state/missing"; then
    echo "dpkg-query: no packages found matching $p" >&2; rc=1
  else
    out=${fmt//'${Package}'/$p}
    out=${out//'${Status}'/install ok installed}
    v=$(awk -v p="$p" '$1 == p { print $2 }' "$state/versions" 2>/dev/null)
    printf '%b' "${out//'${Version}'/${v:-1.0}}"
  fi
done
exit $rc
EOF
chmod 755 "$bin"/*

failures=0 case=
fail() { echo "FAIL [$case]: $*"; failures=$((failures + 1)); }

# reset CASE MISSING...: an empty machine but for the stand-ins; MISSING not installed.
reset() {
  case=$1
  shift
  local d
  for d in "${tmpfs_dirs[@]}"; do
    [[ $(findmnt -n -o FSTYPE "$d") == tmpfs ]] || { echo "install_deps_safe: $d is not this test's tmpfs: stopping" >&2; exit 1; }
  done
  find "${tmpfs_dirs[@]}" "$state" -mindepth 1 -delete
  rm -rf "$work/opt"
  printf '%s\n' "$@" >"$state/missing"
  : >"$state/owners"
}
# slurm_headers DIR VERSION_NUMBER [OWNER]: slurm/spank.h and slurm_version.h in DIR.
slurm_headers() {
  mkdir -p "$1/slurm"
  echo '/* spank.h stand-in */' >"$1/slurm/spank.h"
  echo "#define SLURM_VERSION_NUMBER $2" >"$1/slurm/slurm_version.h"
  [[ -z ${3:-} ]] || echo "$1/slurm/spank.h $3" >>"$state/owners"
}
# slurm_program PATH [OWNER]
slurm_program() {
  mkdir -p "$(dirname "$1")"
  printf '#!/bin/sh\nexit 0\n' >"$1"
  chmod 755 "$1"
  [[ -z ${2:-} ]] || echo "$1 $2" >>"$state/owners"
}
# Debian's Slurm 22.05, installed (its daemons active and enabled: systemctl says so).
debian_slurm() {
  slurm_headers /usr/include 0x160508 libslurm-dev
  slurm_program /usr/sbin/slurmctld slurmctld
  slurm_program /usr/sbin/slurmd slurmd
}
# run ARGS...: the script, as a site's root runs it, with the stand-ins first on PATH.
run() {
  rc=0
  (cd "$work" && PATH=$bin:/usr/bin:/bin timeout 30 bash "$script" "$@") >"$state/out" 2>&1 || rc=$?
}

# Assertions on the last run.
expect_rc() {  # expect_rc ok|fail
  if [[ $1 == ok ]]; then ((rc == 0)) || fail "exit status $rc, expected 0; it said: $(tail -n 3 "$state/out" | paste -sd "|")"
  else ((rc != 0)) || fail "exit status 0, expected a refusal; it said: $(tail -n 3 "$state/out" | paste -sd "|")"; fi
}
said() { grep -qF -- "$1" "$state/out" || fail "its output does not say '$1'; it said: $(tail -n 3 "$state/out" | paste -sd "|")"; }
# No systemctl call but those that only read.
no_service_touched() {
  local line verb
  [[ -f $state/systemctl ]] || return 0
  while read -r line; do
    verb=$(tr ' ' '\n' <<<"$line" | grep -v '^-' | head -n 1)
    case $verb in
      is-active | is-enabled | is-failed | status | show | cat | list-units | list-unit-files | is-system-running) ;;
      *) fail "systemctl $line" ;;
    esac
  done <"$state/systemctl"
}
installed_exactly() {  # installed_exactly PACKAGE...: what apt-get was asked to install
  local want got
  want=$(printf '%s\n' "$@" | sort -u | xargs)
  got=$({ sort -u "$state/installed" 2>/dev/null || true; } | xargs)
  [[ $got == "$want" ]] || fail "apt-get installed '$got', expected '$want'"
}
no_apt() { [[ ! -s $state/apt-get ]] || fail "apt-get ran: $(xargs <"$state/apt-get")"; }
# While apt-get installed, policy-rc.d answered 101; none is left behind.
no_daemon_started() {
  local answers
  answers=$({ sort -u "$state/policy" 2>/dev/null || true; } | xargs)
  [[ $answers == 101 ]] || fail "policy-rc.d answered '${answers:-nothing}' while apt-get installed, not 101"
}
no_policy_left() {
  [[ ! -e /usr/sbin/policy-rc.d ]] || fail "/usr/sbin/policy-rc.d left behind"
  ! compgen -G '/usr/sbin/.policy*' >/dev/null || fail "a temporary policy file left in /usr/sbin: $(ls -a /usr/sbin)"
}

build_missing=(libspdlog-dev nlohmann-json3-dev)
test_missing=(gnuplot-nox python3-torch)

reset "no mode: a usage message, nothing installed" "${build_missing[@]}"
run
expect_rc fail; said "build"; said "test"; no_apt; no_service_touched
reset "an unknown mode" "${build_missing[@]}"
run install
expect_rc fail; said "usage"; no_apt; no_service_touched

for mode in build test; do
  want=("${build_missing[@]}")
  [[ $mode == build ]] || want+=("${test_missing[@]}")
  reset "$mode: Debian's Slurm running and enabled" "${build_missing[@]}" "${test_missing[@]}"
  debian_slurm
  run "$mode"
  expect_rc ok; said "Slurm 22.05.8: /usr/include/slurm/spank.h"
  installed_exactly "${want[@]}"; no_service_touched; no_daemon_started; no_policy_left

  reset "$mode: a second run" ""
  debian_slurm
  start=$SECONDS
  run "$mode"
  expect_rc ok; said "already installed"; no_apt; no_service_touched
  ((SECONDS - start <= 5)) || fail "took $((SECONDS - start)) s"
done

fresh=(libslurm-dev slurmctld slurmd slurm-client munge "${build_missing[@]}" "${test_missing[@]}")
# Not installed on a fresh machine either, nor installed by the script.
no_slurm=(slurm-wlm-basic-plugins slurmdbd)
reset "build: a fresh machine" "${fresh[@]}" "${no_slurm[@]}"
run build
expect_rc ok; said "libslurm-dev"
installed_exactly libslurm-dev "${build_missing[@]}"; no_service_touched; no_daemon_started; no_policy_left

reset "test: a fresh machine (the daemons it installs: not started, then disabled)" "${fresh[@]}" "${no_slurm[@]}"
run test
expect_rc ok
installed_exactly "${fresh[@]}"; no_daemon_started; no_policy_left
calls=$(grep -v -e '^is-' "$state/systemctl" 2>/dev/null | xargs)
[[ $calls == "disable --quiet slurmctld.service slurmd.service" ]] ||
  fail "systemctl calls '$calls', expected only the disabling of the slurmctld and slurmd it installed"

for answer in 101 0; do
  reset "test: a site's own policy-rc.d answering $answer" "${fresh[@]}" "${no_slurm[@]}"
  printf '#!/bin/sh\n# the site'"'"'s\nexit %s\n' "$answer" >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  before=$(stat -c '%i %s %Y %a' /usr/sbin/policy-rc.d; cat /usr/sbin/policy-rc.d)
  run test
  after=$(stat -c '%i %s %Y %a' /usr/sbin/policy-rc.d 2>/dev/null; cat /usr/sbin/policy-rc.d 2>/dev/null)
  [[ $after == "$before" ]] || fail "the site's policy-rc.d changed: '$before' -> '$after'"
  ! compgen -G '/usr/sbin/.policy*' >/dev/null || fail "a temporary policy file left in /usr/sbin"
  if ((answer == 101)); then
    expect_rc ok; installed_exactly "${fresh[@]}"; no_daemon_started
  else
    expect_rc fail; said "policy-rc.d"; [[ ! -s $state/installed ]] || fail "apt-get installed despite a site's policy-rc.d that starts daemons"
    no_service_touched
  fi
done

reset "test: a policy-rc.d a killed run left: named, kept" "${fresh[@]}" "${no_slurm[@]}"
printf '%s\n' '#!/bin/sh' '# packaging/install-deps.sh (slurm-ddp): no service starts while it installs; removed when it ends' 'exit 101' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
run test
expect_rc ok; said "left by a run of this script that was killed"; no_daemon_started
[[ -e /usr/sbin/policy-rc.d ]] || fail "removed a policy-rc.d it did not make in this run"

# A site's own Slurm 24.11.5 in /usr/local, its daemons running and enabled.
site_slurm() {
  slurm_headers /usr/local/include 0x180b05
  slurm_program /usr/local/sbin/slurmctld
  slurm_program /usr/local/sbin/slurmd
}
reset "test: a site's Slurm in /usr/local: refused" "${build_missing[@]}" "${test_missing[@]}" libslurm-dev slurmctld slurmd
site_slurm
run test
expect_rc fail; said "not Debian's"; said "/usr/local/include/slurm/spank.h"; said "install-deps.sh build"; no_apt; no_service_touched
reset "build: a site's Slurm in /usr/local: its headers" "${build_missing[@]}" "${test_missing[@]}" libslurm-dev slurmctld slurmd
site_slurm
run build
expect_rc ok; said "Slurm 24.11.5: /usr/local/include/slurm/spank.h"
installed_exactly "${build_missing[@]}"; no_service_touched; no_daemon_started; no_policy_left

reset "test: Debian's headers, a site's slurmd: refused" "${build_missing[@]}"
debian_slurm
slurm_program /usr/local/sbin/slurmd
run test
expect_rc fail; said "/usr/local/sbin/slurmd"; no_apt; no_service_touched

reset "build: Debian's headers, a site's slurmd: built against the headers, with a note" "${build_missing[@]}"
debian_slurm
slurm_program /usr/local/sbin/slurmd
run build
expect_rc ok; said "Slurm 22.05.8: /usr/include/slurm/spank.h"; said "note: Slurm's programs here are a site's own (/usr/local/sbin/slurmd)"
installed_exactly "${build_missing[@]}"; no_service_touched; no_daemon_started; no_policy_left

reset "build: a site's Slurm programs on PATH, no headers: refused" "${build_missing[@]}" libslurm-dev
slurm_program /usr/local/bin/srun
run build
expect_rc fail; said "DDP_SLURM_PREFIX"; no_apt; no_service_touched

prefix=$work/opt/slurm
for mode in build test; do
  reset "$mode: DDP_SLURM_PREFIX names a site's Slurm" "${build_missing[@]}" "${test_missing[@]}" libslurm-dev slurmctld slurmd
  slurm_headers "$prefix/include" 0x170b0a
  slurm_program "$prefix/sbin/slurmd"
  DDP_SLURM_PREFIX=$prefix run "$mode"
  if [[ $mode == build ]]; then
    expect_rc ok; said "Slurm 23.11.10: $prefix/include/slurm/spank.h"
    installed_exactly "${build_missing[@]}"; no_daemon_started; no_policy_left
  else
    expect_rc fail; said "not Debian's"; no_apt
  fi
  no_service_touched
done
# Installing slurmd on a controller whose Debian slurmctld is older than the
# archive's would upgrade it under the running daemon; a removal likewise.
for plan in "Inst slurmctld [22.05.8-4] (22.05.8-4+deb12u3 Debian:12.11/stable [amd64])" "Remv libfoo1 [1.0]"; do
  what="upgrade the running slurmctld's package"
  [[ $plan == Remv* ]] && what="remove a package"
  reset "test: apt-get would $what: refused" slurmd "${build_missing[@]}"
  debian_slurm
  echo "$plan" >"$state/plan"
  run test
  expect_rc fail; said "$(cut -d' ' -f2 <<<"$plan")"
  [[ ! -s $state/installed ]] || fail "apt-get installed: $(xargs <"$state/installed")"
  no_service_touched; no_policy_left
done

# Upgrades in apt-get's plan. A package that ships a service (a systemd unit,
# either folder, or an init script): its maintainer scripts may restart it,
# some with systemctl itself, which policy-rc.d does not govern (systemd's
# own postinst re-executes systemd and restarts journald): refused, named,
# with the command to upgrade it first.
for unit in systemd:/lib/systemd/system/systemd-journald.service \
  nginx-light:/usr/lib/systemd/system/nginx.service cron:/etc/init.d/cron; do
  pkg=${unit%%:*}
  reset "build: apt-get would upgrade $pkg, which ships ${unit#*:}: refused" "${build_missing[@]}"
  debian_slurm
  echo "Inst $pkg [1.0-1] (1.0-2 Debian:12.11/stable [amd64])" >"$state/plan"
  printf '%s %s\n' "$pkg" /usr/share/doc/"$pkg" "$pkg" "${unit#*:}" >"$state/files"
  run build
  expect_rc fail; said "$pkg"; said "apt-get install --only-upgrade $pkg"
  [[ ! -s $state/installed ]] || fail "apt-get installed: $(xargs <"$state/installed")"
  no_service_touched; no_policy_left
done
# An ordinary library's upgrade (no service in it) is apt's usual work.
reset "build: apt-get would upgrade a library (no service): proceeds" "${build_missing[@]}"
debian_slurm
echo "Inst libfmt9 [9.1.0+ds1-2] (9.1.0+ds1-3 Debian:12.11/stable [amd64])" >"$state/plan"
printf '%s\n' "libfmt9 /usr/lib/x86_64-linux-gnu/libfmt.so.9.1.0" >"$state/files"
run build
expect_rc ok; installed_exactly "${build_missing[@]}"; no_service_touched; no_daemon_started; no_policy_left
# Slurm's and munge's libraries: refused under their installed daemons,
# apt's usual work where none of slurmd, slurmctld, slurmdbd, munge is.
reset "build: apt-get would upgrade libslurm38, slurmd installed: refused" "${build_missing[@]}"
debian_slurm
echo "Inst libslurm38 [22.05.8-4+deb12u2] (22.05.8-4+deb12u3 Debian:12.11/stable [amd64])" >"$state/plan"
run build
expect_rc fail; said "libslurm38"; said "--only-upgrade libslurm38"
[[ ! -s $state/installed ]] || fail "apt-get installed: $(xargs <"$state/installed")"
reset "build: apt-get would upgrade libslurm38, no Slurm or munge daemon installed: proceeds" \
  "${build_missing[@]}" slurmd slurmctld slurmdbd munge
slurm_headers /usr/include 0x160508 libslurm-dev
printf '%s\n' "Inst libslurm38 [22.05.8-4+deb12u2] (22.05.8-4+deb12u3 Debian:12.11/stable [amd64])" \
  "Inst libmunge2 [0.5.15-2] (0.5.15-3 Debian:12.11/stable [amd64])" >"$state/plan"
run build
expect_rc ok; installed_exactly "${build_missing[@]}"; no_service_touched; no_daemon_started; no_policy_left

# Debian's Slurm installed but not its headers: libslurm-dev of that very
# version (the archive's candidate may be another release: backports,
# pinning), or a refusal where the archive lacks that version.
installed_slurm=22.05.8-4+deb12u2
debian_slurm_no_headers() {
  slurm_program /usr/sbin/slurmd slurmd
  printf '%s\n' "slurmd $installed_slurm" "slurm-client $installed_slurm" "slurm-wlm-basic-plugins $installed_slurm" >"$state/versions"
}
reset "build: Debian's Slurm $installed_slurm without libslurm-dev: libslurm-dev=$installed_slurm" \
  "${build_missing[@]}" libslurm-dev slurmctld slurmdbd
debian_slurm_no_headers
run build
expect_rc ok; said "$installed_slurm"
installed_exactly "${build_missing[@]}" "libslurm-dev=$installed_slurm"; no_service_touched; no_daemon_started; no_policy_left
reset "build: Debian's Slurm $installed_slurm, the archive without libslurm-dev $installed_slurm: refused" \
  "${build_missing[@]}" libslurm-dev slurmctld slurmdbd
debian_slurm_no_headers
echo "libslurm-dev=$installed_slurm" >"$state/unavailable"
run build
expect_rc fail; said "libslurm-dev $installed_slurm"; said "--only-upgrade"
[[ ! -s $state/installed ]] || fail "apt-get installed: $(xargs <"$state/installed")"
no_service_touched; no_policy_left
reset "build: Debian's Slurm packages at two versions, no libslurm-dev: refused" \
  "${build_missing[@]}" libslurm-dev slurmctld slurmdbd
debian_slurm_no_headers
echo "slurm-client 22.05.8-4+deb12u3" >>"$state/versions"
sed -i '/^slurm-client '"$installed_slurm"'$/d' "$state/versions"
run build
expect_rc fail; said "slurm-client 22.05.8-4+deb12u3"; said "slurmd $installed_slurm"; no_apt

# Two runs at once: the second waits for the first's lock, and makes no
# policy-rc.d and installs nothing while it waits.
reset "build: another run holds the lock: waits, then installs" "${build_missing[@]}"
debian_slurm
exec 8>>"$lockfile"
flock 8
(run build; echo "$rc" >"$work/rc") &
waiting=$!
for _ in $(seq 200); do
  grep -qs 'waiting' "$state/out" && break
  sleep 0.1
done
said "waiting"
[[ ! -s $state/installed ]] || fail "apt-get installed while another run held the lock"
[[ ! -e /usr/sbin/policy-rc.d ]] || fail "a policy-rc.d made while another run held the lock"
flock -u 8
exec 8>&-
wait "$waiting" || true
rc=$(cat "$work/rc" 2>/dev/null || echo "none")
expect_rc ok; installed_exactly "${build_missing[@]}"; no_daemon_started; no_policy_left

reset "build: DDP_SLURM_PREFIX without Slurm's headers" "${build_missing[@]}" libslurm-dev
mkdir -p "$prefix"
DDP_SLURM_PREFIX=$prefix run build
expect_rc fail; said "DDP_SLURM_PREFIX=$prefix"; no_apt; no_service_touched

if ((failures > 0)); then
  echo "install_deps_safe: $failures failures ($script)"
  exit 1
fi
echo "install_deps_safe: every case passed ($script)"
