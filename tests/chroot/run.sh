#!/usr/bin/env bash
# Builds slurm-ddp and runs its tests inside a chroot of another Debian suite,
# against that suite's own Slurm daemons, PyTorch and libraries:
#
#   tests/chroot/run.sh trixie [CTEST_ARGS...]   # Debian 13: Slurm 24.11, PyTorch 2.6
#   tests/chroot/run.sh sid -R 'allreduce|fail_fast'
#   tests/chroot/run.sh trixie --package [--any-slurm] [CTEST_ARGS...]
#
# --package: after the tests, build the suite's .debs (slurm-ddp, ddp-train)
# from the same build (packaging/build-deb.sh), check slurm-ddp depends on the
# suite's Slurm release, install both with dpkg, run the core cluster tests
# against the installed files, and purge them, checking that nothing is left
# behind.
#
# --any-slurm: then the packages against Slurm as a site may have it instead
# of Debian's (tests/chroot/any_slurm.sh): the suite's Slurm relocated under
# /usr/local with Debian's Slurm packages removed, as a source install and as
# SchedMD's slurm-smd (equivs stand-ins); slurm-ddp built there, installed
# with only that Slurm's dependency, and a --ddp step run on its daemons; and
# headers owned by a site's own package (equivs slurm-site-dev): configuring
# stops and asks for DDP_SLURM_PACKAGE. Debian's Slurm packages are restored
# after.
#
#   tests/chroot/run.sh trixie --bench       # bench/run.sh runs this
#
# --bench: instead of the tests, the training comparison of ddp-train against
# the suite's PyTorch at its best, torch.compile included (bench/train_bench.py;
# PAIRS rounds, default per model), with the suite's OpenBLAS on both sides;
# the results come back as bench/results/train-SUITE.{md,json}.
#
# For working on a release by hand: DDP_CHROOT_KEEP=DIR keeps the chroot in
# DIR after the run (made there if DIR has none yet, else reused as it is, with
# the source copied in afresh), so the next run skips mmdebstrap.
#
#   DDP_CHROOT_KEEP=DIR tests/chroot/run.sh trixie --prepare
#
# --prepare: only make the chroot in DIR (CI makes both suites' while it
# builds natively: mmdebstrap mostly waits on the archive).
#
#   DDP_CHROOT_KEEP=DIR tests/chroot/run.sh sid --build-only
#
# --build-only: only build, in the chroot kept in DIR; a later run there
# finds the build up to date (the source is copied in with its times). CI
# builds the unstable chroot's while the Debian 13 one's tests run: the build
# is niced, and those tests mostly wait on Slurm.
#
# The chroot is made fresh each time with mmdebstrap from Debian's archive
# (about 2.5 minutes); the packages it downloads are kept in
# /var/cache/slurm-ddp/apt/SUITE for the next run on this machine, which goes
# faster with them and works without them. The source tree (tracked and
# untracked files, as they are) is copied in; the build and the tests run
# inside, as root, with the local netns cluster (tests/cluster/cluster.sh) on
# the suite's slurmctld and slurmd. With no CTEST_ARGS every test but lint
# runs. Needs root.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
suite=${1:?usage: tests/chroot/run.sh SUITE [--package] [--any-slurm] [CTEST_ARGS...]}
shift
package=0 any_slurm=0 bench=0 prepare=0 build_only=0
[[ ${1:-} == --package ]] && { package=1; shift; }
[[ ${1:-} == --any-slurm ]] && { any_slurm=1; shift; }
[[ ${1:-} == --build-only ]] && { build_only=1; shift; }
[[ ${1:-} == --bench ]] && { bench=1; shift; }
[[ ${1:-} == --prepare ]] && { prepare=1; shift; }
mirror=${DDP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=/var/cache/slurm-ddp/apt/$suite
[[ $(id -u) == 0 ]] || { echo "chroot/run.sh: needs root (chroot, mounts, network namespaces)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "chroot/run.sh: mmdebstrap is missing: run packaging/install-deps.sh test" >&2; exit 1; }

# What the build and the tests need, by the suite's package names.
packages=(build-essential cmake pkg-config libslurm-dev slurmctld slurmd slurm-client libhwloc-dev hwloc
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libgloo-dev libopenblas-dev libopenblas0-pthread zlib1g-dev libssl-dev
  check iproute2 util-linux mount procps munge binutils file groff-base python3 python3-torch dataset-fashion-mnist gnuplot-nox
  fortunes equivs patchelf)
# What only some suites have, for the tests that are registered only where it
# is found: apptainer (integration.apptainer) is in sid but not in trixie.
case $suite in
  sid | unstable) packages+=(apptainer) ;;
esac
# torch.compile's CPU code generator (inductor) builds C++ against Python's
# and ATen's headers, with setuptools: only the benchmarks compile.
((bench == 0)) || packages+=(python3-dev python3-setuptools libtorch-dev)
aptopts=()
# sid's Release file in the archive can be past its Valid-Until date.
[[ $suite == sid || $suite == unstable ]] && aptopts=(--aptopt='Acquire::Check-Valid-Until "false"')

keep=${DDP_CHROOT_KEEP:-}
((prepare == 0 && build_only == 0)) || [[ -n $keep ]] ||
  { echo "chroot/run.sh: --prepare and --build-only need DDP_CHROOT_KEEP=DIR (where to keep the chroot)" >&2; exit 2; }
if [[ -n $keep ]]; then
  work=$(realpath -m "$keep")
  mkdir -p "$work"
else
  work=$(mktemp -d /var/tmp/ddp-chroot-"$suite".XXXXXX)
fi
root=$work/root
mounts=()
cleanup() {
  local i _
  # ip netns leaves mounts stacked on run/netns: unmount deepest first, repeatedly.
  for _ in 1 2 3; do
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
    { grep -o " ${root}[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    grep -q " $root" /proc/mounts || break
  done
  if grep -q " $root" /proc/mounts; then
    echo "chroot/run.sh: $root is still mounted; left $work" >&2
  elif [[ -n $keep ]]; then
    echo "chroot/run.sh: kept the chroot in $work (DDP_CHROOT_KEEP)"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
# Stopped by a signal (run-all.sh ending early), it unmounts too: bash runs
# no EXIT trap on a signal it does not handle.
trap 'exit 143' TERM
trap 'exit 130' INT HUP
mount_at() {  # mount_at TARGET MOUNT-ARGS...
  local target=$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}

mkdir -p "$cache"
start=$SECONDS
if [[ -x $root/usr/sbin/slurmctld ]]; then
  echo "chroot/run.sh: reusing the $suite chroot in $root (DDP_CHROOT_KEEP)"
else
  echo "chroot/run.sh: a $suite chroot (mmdebstrap; package cache $cache)"
  mmdebstrap --quiet --variant=apt --include="$(IFS=,; echo "${packages[*]}")" "${aptopts[@]}" \
  --skip=download/empty --skip=essential/unlink \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
  --setup-hook="find '$cache' -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives\" {} +" \
  --customize-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -exec cp -n -t '$cache' {} +" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
  "$suite" "$root" "$mirror" </dev/null
fi
echo "chroot/run.sh: chroot ready in $((SECONDS - start)) s: Slurm $(chroot "$root" dpkg-query -W -f='${Version}' slurmctld)," \
  "PyTorch $(chroot "$root" dpkg-query -W -f='${Version}' python3-torch)"

((prepare == 0)) || exit 0

# This machine's name must resolve inside as outside: slurmctld looks up the
# host a client runs on (srun's, to reach it back) by name.
cp /etc/hosts "$root/etc/hosts"

# The tree as it is (tracked and untracked, not ignored): nothing beside it.
rm -rf "$root/src"
mkdir -p "$root/src/main"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$root/src/main" -xf -

# --any-slurm removes Debian's Slurm packages for a while: their .debs, from
# the package cache the chroot was made with, to put them back after.
if ((any_slurm)); then
  rm -rf "$root/var/cache/ddp-slurm-debs"
  mkdir -p "$root/var/cache/ddp-slurm-debs"
  find "$cache" -maxdepth 1 \( -name 'slurm*.deb' -o -name 'libslurm*.deb' \) -exec cp -t "$root/var/cache/ddp-slurm-debs" {} +
fi

# ip netns needs / to be a mount point; the daemons need proc, sys and dev.
# /run as systemd makes it (root's, 0755: a BadNodeHook may live there), /tmp
# sticky and open to all.
mount_at "$root" --bind "$root"
mount_at "$root/proc" -t proc proc
mount_at "$root/sys" --rbind /sys
mount_at "$root/dev" --rbind /dev
mount_at "$root/run" -t tmpfs -o mode=0755 tmpfs
mount_at "$root/tmp" -t tmpfs -o mode=1777 tmpfs

# Cluster names of their own (tx..., sd...): the netns clusters of this run
# then share no interface, namespace, subnet or port with those of a native
# run or of another suite's chroot, so they can run side by side.
case $suite in
  trixie) prefix=tx ;;
  sid | unstable) prefix=sd ;;
  *) prefix=${suite:0:2} ;;
esac
ctest_args=("$@")
# Lint (shellcheck) is the same everywhere and runs natively.
((${#ctest_args[@]})) || ctest_args=(-LE lint)
status=0
rm -rf "$root/var/log/ddp-clusters"
# Into the chroot by pivot_root in a mount namespace of its own, not by
# chroot(2): a container runtime inside (apptainer, integration.apptainer)
# joins the mount namespaces it makes, which puts a process at its namespace's
# real root; from a plain chroot that is the host's / and apptainer aborts
# ("Running inside a weak chrooted environment"). Here the chroot is that
# root. The old root is unmounted with the chroot's python3, which every
# suite's package list has (umount, of package mount, may be missing). The
# mounts made inside (ip netns) stay inside and go with the namespace.
unshare --mount --propagation private -- bash -c '
    cd "$1" && mkdir -p .pivot-old && pivot_root . .pivot-old && cd / &&
    env -i /usr/bin/python3 -I -c "import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True)
sys.exit(libc.umount2(b\"/.pivot-old\", 2) and \"umount /.pivot-old: \" + os.strerror(ctypes.get_errno()))" &&
    rmdir /.pivot-old && exec "${@:2}"
  ' enter-chroot "$root" \
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  USE_LIBUV=0 SLURM_DDP_CLUSTER_LOGS=/var/log/ddp-clusters DDP_CLUSTER_PREFIX="$prefix" DDP_SUITE="$suite" DDP_PACKAGE="$package" \
  DDP_ANY_SLURM="$any_slurm" DDP_BENCH="$bench" DDP_BUILD_ONLY="$build_only" \
  PAIRS="${PAIRS:-}" bash -c '
    set -euo pipefail
    cd /src/main
    # The prefix the package installs to, so that --package packs this build.
    # No debug information: a build for the tests (and its .deb for the
    # package tests), never shipped; -g takes a quarter to a third of the
    # compile time.
    # The bench programs only for --bench (ddp-sgemm-bench): 30-40 s of CPU less.
    bench_tools=OFF
    [[ $DDP_BENCH == 1 ]] && bench_tools=ON
    cmake -S . -B /build -DDDP_WERROR=ON -DDDP_CUDA=OFF -DDDP_BUILD_BENCH=$bench_tools -DCMAKE_INSTALL_PREFIX=/usr \
      -DDDP_TEST_INSTALLED=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DDDP_TEST_CLUSTER="$DDP_CLUSTER_PREFIX" >/dev/null
    # Niced: the build gives way to the tests of whatever runs beside it.
    nice -n 10 cmake --build /build -j"$(nproc)" >/build/build.log 2>&1 || { tail -40 /build/build.log; exit 1; }
    [[ $DDP_BUILD_ONLY == 0 ]] || exit 0
    if [[ $DDP_BENCH == 1 ]]; then
      exec python3 bench/train_bench.py --build /build ${PAIRS:+--pairs "$PAIRS"} --out /src/results \
        --name "train-$DDP_SUITE"
    fi
    # -j: the unit tests two at a time; the cluster tests alone (RUN_SERIAL).
    ctest --test-dir /build --output-on-failure -j"$(nproc)" "$@"
    if [[ $DDP_PACKAGE == 1 ]]; then
      BUILD_DIR=/build packaging/build-deb.sh
      deb=$(ls /build/slurm-ddp_*.deb)
      trainer_deb=$(ls /build/ddp-train_*.deb)
      release=$(dpkg-query -W -f="\${Version}" slurmd | sed -n "s/^\([0-9]*\.[0-9]*\).*/\1/p")
      depends=$(dpkg-deb -f "$deb" Depends)
      [[ $depends == *"slurm-wlm-basic-plugins (>= $release~)"* ]] ||
        { echo "chroot/run.sh: $deb does not depend on Slurm $release: $depends" >&2; exit 1; }
      dpkg -i "$deb" "$trainer_deb"
      cmake -S . -B /build -DDDP_BUILD_TESTS=ON -DDDP_TEST_INSTALLED=ON >/dev/null
      ctest --test-dir /build --output-on-failure \
        -R "integration\.(plugin_loads|allreduce_cpu|sbatch_propagation|launch_path|configless|container_refusal)$"
      # Removed (the drop-in kept), installed again, purged: slurmd and plain
      # srun keep working on this release too.
      tests/package/lifecycle.sh "$deb"
      echo "chroot/run.sh: $(basename "$deb") (Depends: $depends) and $(basename "$trainer_deb") installed, tested, removed, reinstalled and purged"
    fi
    [[ $DDP_ANY_SLURM == 0 ]] || tests/chroot/any_slurm.sh
  ' chroot-suite "${ctest_args[@]}" || status=$?
if ((bench && build_only == 0 && status == 0)); then
  cp "$root/src/results/train-$suite".{md,json} "$repo/bench/results/"
  echo "chroot/run.sh: wrote bench/results/train-$suite.md"
fi
if ((status != 0)); then
  # What Slurm's daemons said, for the failures above.
  for log in "$root"/var/log/ddp-clusters/*/*.log; do
    [[ -f $log ]] || continue
    echo "--- ${log#"$root"} (last 15 lines)"
    tail -15 "$log"
  done
fi
echo "chroot/run.sh: $suite finished with status $status after $((SECONDS - start)) s"
exit "$status"
