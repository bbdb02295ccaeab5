#!/usr/bin/env bash
# Every test, from a fresh clone: install dependencies, build with warnings as
# errors (CUDA parts too when /usr/local/cuda exists), run the unit tests and
# lint; pack the GPU kit and run its CPU checks in a minimal chroot; pack this
# release's packages; build again with sanitizers and run the unit, fuzz and
# cluster tests there (tests/sanitize.sh); install this release's packages
# (slurm-ddp and ddp-train), packed from the first build, with dpkg, and run against the installed files
# the cluster tests the sanitizer pass leaves out and those about the
# installation itself; a rolling upgrade from the older release, then remove,
# reinstall, upgrade from the older release and purge on a real cluster
# (tests/package/); then the unit tests and the tests labelled releases inside
# a Debian 13 chroot (Slurm 24.11, PyTorch 2.6, with its own packages, then
# packages built there against that Slurm relocated to /usr/local: as a
# source install and as SchedMD's slurm-smd) and a
# Debian unstable one (Slurm 26.05) (tests/chroot/run.sh). The chroots' builds
# and the older release's package are made in the background from the start,
# at the lowest priority, in the CPU the other steps leave idle (their
# cluster tests mostly wait on Slurm). Where each test runs: the labels at the
# end of tests/integration/CMakeLists.txt. Each step's time is printed as it
# ends and all of them at the end.
# Needs root: dpkg, and the test clusters use network namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

# The steps' times, for keeping CI within its 90 minutes.
step_name="dependencies" step_start=$SECONDS step_times=()
step() {  # step NAME: ends the step running, starts NAME
  step_times+=("$step_name $((SECONDS - step_start)) s")
  echo "run-all: $step_name took $((SECONDS - step_start)) s; next: $1"
  step_name=$1 step_start=$SECONDS
}
chroots="" purge_on_exit=0 background=()
kill_tree() {  # kill_tree PID: TERM to PID and every process under it, the deepest first
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill -TERM "$1" 2>/dev/null || true
}
on_exit() {
  local status=$? pid
  # A run that ends early leaves no background build behind (chroot/run.sh
  # unmounts its chroot on TERM).
  for pid in "${background[@]}"; do ! kill -0 "$pid" 2>/dev/null || kill_tree "$pid"; done
  for pid in "${background[@]}"; do wait "$pid" 2>/dev/null || true; done
  ((purge_on_exit == 0)) || dpkg --purge slurm-ddp ddp-train >/dev/null 2>&1 || true
  # The kept chroots, only once nothing is mounted in them (run.sh unmounts).
  if [[ -n $chroots && -d $chroots ]] && ! grep -q " $chroots/" /proc/mounts; then rm -rf "$chroots"; fi
  step_times+=("$step_name $((SECONDS - step_start)) s (status $status)")
  printf 'run-all: %s\n' "${step_times[@]}"
  echo "run-all: $SECONDS s in all"
}
trap on_exit EXIT
# A run stopped by a signal cleans up too (bash runs no EXIT trap on a signal
# it does not handle).
trap 'exit 143' TERM
trap 'exit 130' INT HUP

packaging/install-deps.sh test
old_release=1d2248e
git cat-file -e "$old_release^{commit}" 2>/dev/null ||
  { echo "run-all: commit $old_release is not in this clone (a shallow clone?): git fetch --unshallow" >&2; exit 1; }
# In the background, kept in one folder until the end: both chroots, made
# while this machine builds (mmdebstrap mostly waits on Debian's archive),
# then each one's build; and the older release's .deb for the upgrade and
# rolling-upgrade tests. The builds run at the lowest priority: a step in the
# foreground (a build, a cluster test) takes the CPU it asks for, and they
# take what it leaves.
chroots=$(mktemp -d /var/tmp/slurm-ddp-ci-chroots.XXXXXX)
run_suite() {  # run_suite SUITE ARGS...: tests/chroot/run.sh in the chroot made here
  local suite=$1
  shift
  DDP_CHROOT_KEEP=$chroots/$suite tests/chroot/run.sh "$suite" "$@"
}
chroot_pids=()
for suite in trixie sid; do
  (
    run_suite "$suite" --prepare >"$chroots/$suite-prepare.log" 2>&1 || exit 1
    renice -n 19 -p "$BASHPID" >/dev/null
    run_suite "$suite" --build-only >"$chroots/$suite-build.log" 2>&1 || exit 2
  ) &
  chroot_pids+=($!)
  background+=($!)
done
# The older release: old_release, the last one whose drop-in named the
# plugin itself and whose agents speak rendezvous protocol 3.
build_old_release() {
  rm -rf build-old && mkdir -p build-old/src
  git archive "$old_release" | tar -x -C build-old/src
  # A package for the tests only, never shipped: compiled at -O1 without
  # debug information, which its build-deb.sh keeps from this first
  # configuration.
  cmake -S build-old/src -B build-old/build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
    -DDDP_BUILD_TESTS=OFF -DDDP_CUDA=OFF >/dev/null
  BUILD_DIR="$PWD/build-old/build" build-old/src/packaging/build-deb.sh >/dev/null
}
(renice -n 19 -p "$BASHPID" >/dev/null; build_old_release) >"$chroots/old-release.log" 2>&1 &
old_release_pid=$!
background+=("$old_release_pid")
step "build, unit tests and lint"
# The prefix the package installs to, so that the package step packs this
# build as it is (build-deb.sh there only drops the tests and the CUDA parts).
cmake -S . -B build -DDDP_WERROR=ON -DDDP_BUILD_TESTS=ON -DDDP_TEST_INSTALLED=OFF -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j"$(nproc)"
# The unit tests bind ephemeral ports (unit.ports: 40 of its own, from its
# pid) and make their own temporary files: in parallel.
ctest --test-dir build --output-on-failure -L "unit|lint" -j"$(nproc)"

# The GPU kit (tests/gpu/README.md): packed from this build, then proven
# self-contained in a minimal Debian chroot, where its CPU checks must pass.
# It needs the CUDA toolkit with NCCL in /usr/local/cuda, which CI has; a
# machine without one says so, and CI (CI=true) refuses to go on without it.
step "GPU kit"
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  tests/gpu/kit.sh --build-dir build
  tests/gpu/kit-check.sh
elif [[ -n ${CI:-} ]]; then
  echo "run-all: CI needs the CUDA toolkit with NCCL in /usr/local/cuda to build and check the GPU kit" >&2
  exit 1
else
  echo "run-all: no CUDA toolkit in /usr/local/cuda: the GPU kit is neither built nor checked on this machine" >&2
fi

# This release's packages: the .deb packed from the build above (a second
# build of the same sources would cost minutes of CI), and the source RPM;
# each linted.
step "this release's packages"
BUILD_DIR=$PWD/build packaging/build-deb.sh
packaging/build-rpm.sh --source-only
deb=$(ls build/slurm-ddp_*.deb)
trainer_deb=$(ls build/ddp-train_*.deb)

# The sanitizer build (clang, ASan + UBSan): unit tests, 10 s of libFuzzer per
# fuzz target (the committed inputs replayed with the unit tests; long
# campaigns by hand: DDP_FUZZ_SECONDS), the cluster and integration tests not
# labelled unsanitized; clean or red.
step "sanitizers"
DDP_FUZZ_SECONDS=10 tests/sanitize.sh

# The packages, as a site installs them on a node that trains. A slurm-ddp
# or ddp-train already installed is a site's or a run that was killed before
# its purge (a CI machine's image may carry one left by an interrupted run on
# the machine it was made from): on a CI machine it is purged, saying so;
# elsewhere it is the user's to keep.
for p in slurm-ddp ddp-train; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || continue
  if [[ -z ${CI:-} ]]; then
    echo "run-all: $p is already installed on this machine; purge it first (dpkg --purge slurm-ddp ddp-train)" >&2
    exit 1
  fi
  echo "run-all: CI: purging the $p $(dpkg-query -W -f='${Version}' "$p") already installed on this machine" >&2
  dpkg --purge "$p" >/dev/null
done
step "the installed packages' tests"
dpkg -i "$deb" "$trainer_deb"
purge_on_exit=1
# What a user sees first: the options in the installed man page.
man -P cat spank-ddp 2>/dev/null | grep -q -- '--ddp-gpus' || { echo "run-all: man spank-ddp shows no options" >&2; exit 1; }
# (build-deb.sh left the tests out of the build's configuration: back in;
# their programs were built in the first step.) Every cluster test runs
# natively once: those the sanitizer pass left out (unsanitized) here, with
# those about the installed files themselves (installed).
cmake -S . -B build -DDDP_BUILD_TESTS=ON -DDDP_TEST_INSTALLED=ON >/dev/null
ctest --test-dir build --output-on-failure -L "unsanitized|installed"
cmake -S . -B build -DDDP_TEST_INSTALLED=OFF >/dev/null
step "the older release's package"
wait "$old_release_pid" || { cat "$chroots/old-release.log" >&2; echo "run-all: building the older release's package failed" >&2; exit 1; }
cat "$chroots/old-release.log"
old_deb=$(ls build-old/build/slurm-ddp_*.deb)
step "rolling upgrade and lifecycle"
# A rolling upgrade: steps spanning a node of the older release (its plugin
# and agent) and nodes of this one, in both directions.
tests/package/mixed_versions.sh build-old/build/spank/spank_ddp.so build-old/build/agent/ddp-agent \
  /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_ddp.so /usr/bin/ddp-agent
# Removal, reinstall, upgrade from the older release and purge, on a real
# cluster whose plugstack.conf is Debian's (ends with the packages purged);
# ddp-train's package beside $deb is installed with it.
tests/package/lifecycle.sh "$deb" "$old_deb"

# Current Slurm on real daemons: the tests labelled releases (and the unit
# tests) inside a Debian 13 chroot, against its Slurm 24.11, PyTorch 2.6 and
# libraries, where the plugin takes its 23.11+ launch path, then its .deb,
# packed from that build, installed and tested there; then inside a Debian
# unstable chroot (Slurm 26.05, PyTorch 2.14, GCC 16, apptainer). Their
# builds are done (or finish here); their tests one after the other: side by
# side, their CPU-bound tests (PyTorch's start-up) take as long as in turn,
# some four times their time alone.
step "Debian 13 and unstable chroots"
for i in "${!chroot_pids[@]}"; do
  wait "${chroot_pids[i]}" || {
    cat "$chroots"/*-prepare.log "$chroots"/*-build.log >&2 2>/dev/null || true
    echo "run-all: making or building in the chroots failed" >&2
    exit 1
  }
done
run_suite trixie --package --any-slurm -L 'unit|releases'
run_suite sid -L 'unit|releases'
