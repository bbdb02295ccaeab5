#!/usr/bin/env bash
# Installs what slurm-ddp needs, from Debian's own archive only. The mode is
# required, so that nobody gets the test stack by accident:
#
#   packaging/install-deps.sh build   # what building the packages needs
#   packaging/install-deps.sh test    # build + what tests/run-all.sh and examples/run-demo.sh need
#
# build: safe on a site's build host, controller or node. The toolchain,
#   CMake, pkg-config, the libraries the plugin, agent and trainer link, and
#   the packaging tools (dpkg-dev, lintian, rpm, rpmlint, man-db). Slurm's
#   headers: the site's own where slurm/spank.h is found (DDP_SLURM_PREFIX's
#   include/ when set, such as DDP_SLURM_PREFIX=/opt/slurm, else
#   /usr/local/include, else /usr/include); Debian's libslurm-dev only where
#   none is, and never beside Slurm programs that are not Debian's (name
#   their prefix instead). It says which Slurm it found. Where Debian's Slurm
#   is installed (slurmd, slurmctld, slurmdbd, slurm-client,
#   slurm-wlm-basic-plugins) but not its headers, libslurm-dev is that
#   version (libslurm-dev=VERSION), not the archive's candidate, which may be
#   another release (backports, pinning); likewise slurmctld, slurmd and
#   slurm-client in the test mode. It refuses where the archive lacks that
#   version, or where those packages are at different versions.
# test: build's packages plus Check, the linters, clang 19's sanitizers,
#   mmdebstrap for the chroots, PyTorch, the data sets, and Debian's Slurm
#   (slurmctld, slurmd, slurm-client, munge) for the local test clusters
#   (tests/cluster/cluster.sh). It refuses on a host whose Slurm is not
#   Debian's (headers or daemons from no Debian package) rather than install
#   Debian's over it: build there, test on another machine.
#
# Services: no service that was installed or running before is stopped,
# disabled, restarted or reconfigured. While apt-get installs, a temporary
# /usr/sbin/policy-rc.d answers 101 (Debian's way to say "start nothing"), so
# no package starts a daemon; a site's own policy-rc.d is never replaced or
# removed, and must then deny the daemons the test mode installs. slurmctld
# and slurmd, when this run installed them, are disabled afterwards: the test
# clusters need only their programs, and a system-wide slurmd started at boot
# would hold port 6818, which cluster.sh --host-network uses. policy-rc.d
# governs only invoke-rc.d and deb-systemd-invoke, and some maintainer
# scripts call systemctl themselves (systemd's re-executes systemd and
# restarts journald), so apt-get's plan is checked first: where it would
# remove a package, upgrade an installed package that ships a service (a
# unit in /lib/systemd/system or /usr/lib/systemd/system, or a script in
# /etc/init.d), or upgrade Slurm's or munge's packages while slurmd,
# slurmctld, slurmdbd or munge is installed, it installs nothing and names
# them and what to do first (upgrade them yourself, when it suits you). Any
# other upgrade (a library with no service, libslurm with no daemon) is
# apt-get's ordinary work and proceeds.
#
# One run at a time: a run that installs holds a lock
# (/run/lock/slurm-ddp-install-deps.lock; /run/slurm-ddp-install-deps.lock
# where /run/lock is missing) from before apt-get's plan until it ends; a
# second waits for it (at most 10 minutes), then looks again at what is
# missing.
#
# Idempotent: a second run installs nothing and finishes in a second or two.
# Installing needs root; a run that finds everything installed does not.
# CUDA is optional and never installed here: when /usr/local/cuda has nvcc and
# NCCL, CMake builds the CUDA parts too.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: packaging/install-deps.sh build|test
  build  what building slurm-ddp's packages needs (safe on a cluster's hosts;
         a site's own Slurm: DDP_SLURM_PREFIX=/opt/slurm packaging/install-deps.sh build)
  test   build's packages plus the test stack and Debian's Slurm for the local
         test clusters (what tests/run-all.sh and examples/run-demo.sh need)
EOF
}
case ${1:-} in
  build | test) mode=$1 ;;
  -h | --help) usage; exit 0 ;;
  *) usage >&2; echo "install-deps.sh: name a mode: build or test" >&2; exit 2 ;;
esac
me="install-deps.sh $mode"
die() { echo "$me: $*" >&2; exit 1; }

build_packages=(
  # toolchain
  build-essential cmake pkg-config
  # libraries the plugin, agent and trainer link
  libhwloc-dev libspdlog-dev libfmt-dev libcli11-dev libgloo-dev
  libopenblas-dev zlib1g-dev nlohmann-json3-dev
  # libcrypto (HMAC-SHA256) for the rendezvous authentication
  libssl-dev
  # packages: .deb (dpkg-dev for dpkg-shlibdeps, lintian) and .rpm (rpmbuild, rpmlint)
  dpkg-dev lintian rpm rpmlint man-db
)
test_packages=(
  # Slurm 22.05: headers, daemons and clients for the local cluster; munge for
  # the configless cluster (Slurm's packages pull it in; named for clarity)
  libslurm-dev slurmctld slurmd slurm-client munge
  # lstopo and hwloc-calc for the binding tests
  hwloc
  # OpenBLAS as the system libblas.so.3 too: Debian's torch (the benchmarks'
  # peer) otherwise runs on the slow reference BLAS
  libopenblas0-pthread
  # ddp-train-plot: metrics to PNG
  gnuplot-nox
  # unit tests, shell lint
  check shellcheck
  # the size lint (tests/lint/size_limits.py): each function's first and last line
  universal-ctags
  # the sanitizer build and the fuzz targets (tests/sanitize.sh): clang 19 with
  # its ASan/UBSan/libFuzzer runtimes (14's ASan runtime can hang a task that
  # slurmstepd forks; sanitize.sh says why), llvm-symbolizer for readable
  # reports, patchelf for the srun/sbatch/salloc copies that load the runtime
  clang-19 libclang-rt-19-dev llvm-19 patchelf
  # the integration tests' tools (nm/readelf, strings)
  binutils
  # the local multi-node cluster: network namespaces, veth, bridge
  iproute2 util-linux procps
  # PyTorch compatibility tests and the real dataset; the language model's
  # text (fortune's cookies, plain text in Debian 12, 13 and unstable alike)
  python3 python3-torch dataset-fashion-mnist fortunes
  # the GPU kit's check and the Debian 13 and unstable test chroots
  mmdebstrap
)
# Daemons the test mode installs, which must not start while it does.
daemons=(slurmctld slurmd munge)
# Debian's packages of Slurm's headers and programs (slurmctld and slurmd are
# alternatives: /usr/sbin/slurmd -> slurmd-wlm).
debian_slurm=(libslurm-dev slurmctld slurmd slurm-client)
# Debian's Slurm packages whose version is the installed Slurm's: what runs
# the plugin (slurmd, srun), and the plugins it is built for.
debian_slurm_installed=(slurmd slurmctld slurmdbd slurm-client slurm-wlm-basic-plugins)
# Daemons whose Slurm or munge packages are not upgraded under them.
slurm_daemons=(slurmd slurmctld slurmdbd munge)

# owner PATH: the Debian package that ships PATH (symlinks followed), or nothing.
owner() {
  local real line
  real=$(readlink -f "$1") || return 0
  line=$(dpkg-query -S "$real" 2>/dev/null | grep -v '^diversion by' | head -n 1) || return 0
  line=${line%%: *}
  echo "${line%%:*}"  # "pkg:amd64" -> "pkg"
}
is_debian_slurm() { [[ -n $1 && " ${debian_slurm[*]} " == *" $1 "* ]]; }
from() { if [[ -n $1 ]]; then echo "Debian's package $1"; else echo "no Debian package: a site's own"; fi; }

# Slurm's headers: the prefix named, else the standard places.
spank_h=
if [[ -n ${DDP_SLURM_PREFIX:-} ]]; then
  spank_h=$DDP_SLURM_PREFIX/include/slurm/spank.h
  [[ -f $spank_h ]] || die "DDP_SLURM_PREFIX=$DDP_SLURM_PREFIX has no include/slurm/spank.h: name the prefix Slurm was installed to (the one with include/ and lib/)"
else
  for h in /usr/local/include/slurm/spank.h /usr/include/slurm/spank.h; do
    [[ -f $h ]] && { spank_h=$h; break; }
  done
fi
# Slurm's programs wherever root may find them: the prefix, PATH, the usual
# places; every copy, as any one may be the site's.
slurm_programs=()
dirs=()
[[ -z ${DDP_SLURM_PREFIX:-} ]] || dirs+=("$DDP_SLURM_PREFIX/sbin" "$DDP_SLURM_PREFIX/bin")
IFS=: read -ra path_dirs <<<"$PATH"
dirs+=("${path_dirs[@]}" /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin)
for prog in slurmctld slurmd srun; do
  for d in "${dirs[@]}"; do
    [[ -n $d && -x $d/$prog && " ${slurm_programs[*]} " != *" $d/$prog "* ]] && slurm_programs+=("$d/$prog")
  done
done
foreign=()  # Slurm's files that no Debian Slurm package ships
for f in ${spank_h:+"$spank_h"} ${slurm_programs[@]+"${slurm_programs[@]}"}; do
  is_debian_slurm "$(owner "$f")" || foreign+=("$f")
done

if [[ $mode == test ]] && ((${#foreign[@]} > 0)); then
  die "this host's Slurm is not Debian's (${foreign[*]}: in no Debian Slurm package); the test mode would install Debian's Slurm over it. Build here with: $0 build; run the tests on a machine without a site Slurm (a Debian 12 VM or container)"
fi
packages=("${build_packages[@]}")
if [[ -n $spank_h ]]; then
  version=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]\{6\}\).*/\1/p' "${spank_h%/spank.h}/slurm_version.h" 2>/dev/null || true)
  [[ -z $version ]] || version=$(printf '%d.%02d.%d' "0x${version:0:2}" "0x${version:2:2}" "0x${version:4:2}")
  echo "$me: Slurm ${version:-(version unknown)}: $spank_h ($(from "$(owner "$spank_h")"))"
  [[ $mode != build || ${#foreign[@]} -eq 0 || " ${foreign[*]} " == *" $spank_h "* ]] ||
    echo "$me: note: Slurm's programs here are a site's own (${foreign[*]}); if their release is not that one, name their prefix: DDP_SLURM_PREFIX=/opt/slurm $0 build" >&2
elif ((${#foreign[@]} > 0)); then
  die "no slurm/spank.h found, but Slurm's programs here are a site's own (${foreign[*]}): Debian's headers would build a plugin for another Slurm. Name that Slurm's prefix: DDP_SLURM_PREFIX=/opt/slurm $0 build"
else
  echo "$me: no slurm/spank.h in /usr/local/include or /usr/include: Debian's libslurm-dev provides it (a site's own Slurm: DDP_SLURM_PREFIX=/opt/slurm $0 $mode)"
  packages+=(libslurm-dev)
fi
if [[ $mode == test ]]; then
  for p in "${test_packages[@]}"; do [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p"); done
fi

# installed PACKAGE...: those installed, as "PACKAGE VERSION" lines
# ("install ok installed", or "hold ok installed" for a package held).
installed() {
  dpkg-query -W -f='${Package} ${Status} ${Version}\n' "$@" 2>/dev/null |
    awk '$3 == "ok" && $4 == "installed" { print $1, $5 }' || true
}
# find_missing: missing, the packages of this mode not installed.
find_missing() {
  local have p
  have=$(installed "${packages[@]}" | awk '{ print $1 }')
  missing=()
  for p in "${packages[@]}"; do
    grep -qxF "$p" <<<"$have" || missing+=("$p")
  done
}
find_missing
if ((${#missing[@]} == 0)); then
  echo "$me: all ${#packages[@]} packages already installed"
  exit 0
fi
[[ $(id -u) -eq 0 ]] || die "${missing[*]} missing; installing them needs root: sudo $0 $mode"
export DEBIAN_FRONTEND=noninteractive
# needrestart (where installed) would restart services using upgraded libraries.
export NEEDRESTART_SUSPEND=1

# One run at a time, from the plan to the end: two runs would each make and
# remove policy-rc.d under the other's apt-get. The lock goes with this
# process, however it ends.
lock=/run/lock/slurm-ddp-install-deps.lock
[[ -d ${lock%/*} ]] || lock=/run/slurm-ddp-install-deps.lock
{ exec 9>>"$lock"; } 2>/dev/null || die "cannot open the lock file $lock: make ${lock%/*} writable by root, then run again"
if ! flock -n 9; then
  echo "$me: another install-deps.sh run (pid $(cat "$lock" 2>/dev/null || true)) holds $lock: waiting for it, at most 10 minutes" >&2
  flock -w 600 9 ||
    die "another install-deps.sh run (pid $(cat "$lock" 2>/dev/null || true)) has held $lock for 10 minutes: let it finish, or stop it, then run again"
  # What the other run installed is no longer missing.
  find_missing
  if ((${#missing[@]} == 0)); then
    echo "$me: all ${#packages[@]} packages already installed"
    exit 0
  fi
fi
echo "$$" >"$lock"
# apt-get and what it runs get no copy of the lock's descriptor: a process
# left running after them would hold the lock on.

# Debian's Slurm installed without some of its packages: those at the same
# version, as the archive's candidate may be another release (backports,
# pinning), under which the plugin would be built for a Slurm that does not
# run here, or apt-get would upgrade the installed Slurm.
args=("${missing[@]}")
slurm_have=$(installed "${debian_slurm_installed[@]}")
slurm_version=
if [[ -n $slurm_have ]]; then
  slurm_versions=$(awk '{ print $2 }' <<<"$slurm_have" | sort -u)
  for i in "${!args[@]}"; do
    is_debian_slurm "${args[i]}" || continue
    [[ $slurm_versions != *$'\n'* ]] ||
      die "Debian's Slurm packages here are at different versions ($(paste -sd, <<<"$slurm_have" | sed 's/,/, /g')), an upgrade half done: which release to install ${args[i]} for is unclear. Bring them to one version (apt-get install --only-upgrade $(awk '{ print $1 }' <<<"$slurm_have" | xargs)), then run again"
    slurm_version=$slurm_versions
    args[i]=${args[i]}=$slurm_version
  done
  [[ -z $slurm_version ]] ||
    echo "$me: Debian's Slurm $slurm_version is installed ($(awk '{ print $1 }' <<<"$slurm_have" | xargs)): its packages of that version"
fi

apt-get update -qq 9>&-

# What apt-get would do, first (policy-rc.d, below, governs only invoke-rc.d
# and deb-systemd-invoke; a maintainer script that calls systemctl itself is
# not stopped by it): it may remove nothing, upgrade no installed package
# that ships a service, nor upgrade this machine's Slurm or munge under their
# installed daemons. Other upgrades (libraries) are apt's ordinary work.
plan=$(apt-get -s install --no-install-recommends "${args[@]}" 2>&1 9>&-) || {
  [[ -z $slurm_version ]] || ! grep -qF "Version '$slurm_version' for '" <<<"$plan" ||
    die "the archive has no $(grep -o "for '[^']*' was not found" <<<"$plan" | head -n 1 | cut -d"'" -f2) $slurm_version, the version of Debian's Slurm installed here (apt-cache policy shows the versions it has): upgrade this Slurm to the archive's when it suits you (apt-get install --only-upgrade $(awk '{ print $1 }' <<<"$slurm_have" | xargs)), or add the archive that has $slurm_version to apt's sources; then run again"
  die "apt-get cannot install ${args[*]}: $(tail -n 3 <<<"$plan" | paste -sd ' ')"
}
removed=() upgraded=() new=()
while read -r verb pkg old _; do
  if [[ $verb == Remv ]]; then removed+=("${pkg%%:*}")
  elif [[ $verb == Inst && $old != \[* ]]; then new+=("${pkg%%:*}")
  elif [[ $verb == Inst ]]; then upgraded+=("$pkg"); fi
done <<<"$plan"
((${#removed[@]} == 0)) ||
  die "installing ${args[*]} would remove ${removed[*]}: settle that with apt-get yourself (apt-get -s install ${args[*]} shows why), then run again"
services=() slurm_upgraded=()
for pkg in ${upgraded[@]+"${upgraded[@]}"}; do
  # PACKAGE[:ARCH] as apt-get names it, which dpkg-query takes as it is.
  files=$(dpkg-query -L "$pkg" 2>/dev/null || true)
  if grep -Eq '^((/usr)?/lib/systemd/system|/etc/init\.d)/[^/]+$' <<<"$files"; then
    services+=("${pkg%%:*}")
  elif [[ $pkg =~ ^(lib)?(slurm|munge|pmix) ]]; then
    slurm_upgraded+=("${pkg%%:*}")
  fi
done
((${#services[@]} == 0)) ||
  die "installing ${args[*]} would upgrade ${services[*]}, which ship services (a systemd unit or an init script): their maintainer scripts may restart them, some with systemctl itself, which no policy-rc.d stops. Upgrade them yourself first, when it suits you: apt-get install --only-upgrade ${services[*]}; then run again"
daemons_here=$(installed "${slurm_daemons[@]}" | awk '{ print $1 }' | xargs)
[[ ${#slurm_upgraded[@]} -eq 0 || -z $daemons_here ]] ||
  die "installing ${args[*]} would upgrade this machine's Slurm or munge (${slurm_upgraded[*]}) under its daemons ($daemons_here): upgrade them yourself first, when it suits you: apt-get install --only-upgrade ${slurm_upgraded[*]}; then run again"

# No package starts a service while apt-get runs: Debian's invoke-rc.d and
# deb-systemd-invoke ask /usr/sbin/policy-rc.d, and 101 means "forbidden". A
# site's own is left as it is, but must deny the daemons installed here.
policy=/usr/sbin/policy-rc.d ours=
remove_policy() {
  [[ -n $ours ]] || return 0
  if [[ $policy -ef $ours ]]; then rm -f "$policy"; fi
  rm -f "$ours"
}
trap remove_policy EXIT
trap 'exit 130' INT HUP
trap 'exit 143' TERM
if [[ -e $policy || -L $policy ]]; then
  ! grep -qs 'packaging/install-deps.sh (slurm-ddp)' "$policy" ||
    echo "$me: $policy was left by a run of this script that was killed; it keeps every service from starting: rm $policy /usr/sbin/.policy-rc.d.slurm-ddp.* once no install-deps.sh runs" >&2
  for d in "${daemons[@]}"; do
    [[ " ${new[*]} " == *" $d "* ]] || continue
    rc=0
    "$policy" "$d" start >/dev/null 2>&1 || rc=$?
    ((rc == 101)) || die "this site's $policy allows starting $d (it answers $rc, not 101), which this run would install: make it answer 101 while this runs, or install $d yourself (apt-get install $d) and run again"
  done
else
  ours=$(mktemp /usr/sbin/.policy-rc.d.slurm-ddp.XXXXXX)
  printf '%s\n' '#!/bin/sh' '# packaging/install-deps.sh (slurm-ddp): no service starts while it installs; removed when it ends' 'exit 101' >"$ours"
  chmod 755 "$ours"
  # A hard link: made only where no policy-rc.d appeared in the meantime.
  ln "$ours" "$policy" 2>/dev/null || { rm -f "$ours"; ours=; die "$policy appeared while this ran (another installer?): run again once it is done"; }
fi

echo "$me: installing ${args[*]}"
# --no-install-recommends keeps the machine lean; what we need is listed above.
apt-get install -y -qq --no-install-recommends "${args[@]}" >/dev/null 9>&-
# The system-wide slurmctld and slurmd this run installed stay off at boot too.
units=()
for d in slurmctld slurmd; do [[ " ${new[*]} " != *" $d "* ]] || units+=("$d.service"); done
if ((${#units[@]} > 0)) && command -v systemctl >/dev/null; then
  systemctl disable --quiet "${units[@]}" 2>/dev/null || echo "$me: could not disable ${units[*]} (installed by this run, never started): systemctl disable ${units[*]}" >&2
fi
echo "$me: done"
