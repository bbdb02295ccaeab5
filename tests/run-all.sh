#!/usr/bin/env bash
# Every test, from a fresh clone: install dependencies, build with warnings as
# errors (CUDA parts too when /usr/local/cuda exists), run the unit tests and
# lint; pack the GPU kit and run its CPU checks in a minimal chroot; build
# again with sanitizers and run the unit, fuzz and cluster tests there
# (tests/sanitize.sh); build and run the suite again inside a Debian 13
# chroot (Slurm 24.11, PyTorch 2.6: tests/chroot/run.sh) and its core in
# Debian unstable (Slurm 26.05); then build the
# Debian package, install it with dpkg, run the cluster tests against the
# installed files (not the build tree), then remove, reinstall, upgrade from
# an older release and purge it on a real cluster (tests/package/lifecycle.sh).
# Needs root: dpkg, and the test clusters use network namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake -S . -B build -DDDP_WERROR=ON -DDDP_BUILD_TESTS=ON -DDDP_TEST_INSTALLED=OFF >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -L "unit|lint"

# The GPU kit (tests/gpu/README.md): packed from this build, then proven
# self-contained in a minimal Debian chroot, where its CPU checks must pass.
# It needs the CUDA toolkit with NCCL in /usr/local/cuda, which CI has; a
# machine without one says so, and CI (CI=true) refuses to go on without it.
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  tests/gpu/kit.sh --build-dir build
  tests/gpu/kit-check.sh
elif [[ -n ${CI:-} ]]; then
  echo "run-all: CI needs the CUDA toolkit with NCCL in /usr/local/cuda to build and check the GPU kit" >&2
  exit 1
else
  echo "run-all: no CUDA toolkit in /usr/local/cuda: the GPU kit is neither built nor checked on this machine" >&2
fi

# The sanitizer build (clang, ASan + UBSan): unit tests, 30 s of libFuzzer per
# fuzz target, every cluster and integration test; clean or red.
tests/sanitize.sh

# Current Slurm on real daemons: every test again (lint aside) inside a
# Debian 13 chroot, against its Slurm 24.11, PyTorch 2.6 and libraries, where
# the plugin takes its 23.11+ launch path (tests/chroot/run.sh).
# Then its .deb, packed from that build, installed and tested there. The
# rendezvous flood (a minute of strangers at node 0's agent), the straggler
# watch (80 s of training, one node throttled by a cpu cgroup) and the
# pre-flight (a minute: a cpu cgroup, tc) test the agent and the kernel, not
# Slurm: the native package pass runs them (the sanitizer pass too, but for
# the two labelled slow).
tests/chroot/run.sh trixie --package -LE lint -E 'integration\.(rdzv_flood|straggler|preflight)$'
# And the core of it in Debian unstable (Slurm 26.05, PyTorch 2.14, GCC 16):
# unit tests, allreduce, sbatch propagation, errors, fail-fast, restarts, the
# site config, privileges, the launch path, configless nodes, pyxis's refusal,
# torchrun's worker variables, the stop grace, Slurm's variables per worker,
# a 2-node training run inside apptainer containers (sid has apptainer),
# planted run files, a reader that pauses, six steps sharing two nodes
# and a 16-port range (ports that never collide), and oversized values
# forged into a step's environment (bounded before any parser).
tests/chroot/run.sh sid -R 'unit\.|allreduce_cpu|sbatch_propagation|errors|fail_fast|restarts|site_config|privilege|launch_path|configless|container_refusal|torchrun_env|stop_grace|slurm_view|hang|apptainer|run_files|paused_reader|concurrent_ports|root_inputs'

# The package, as a site installs it. A slurm-ddp already installed is a
# site's or a run that was killed before its purge (the stop CI of 27d255f
# found one left by an interrupted run on the machine its image came from):
# on a CI machine it is purged, saying so; elsewhere it is the user's to keep.
if dpkg-query -W -f='${Status}' slurm-ddp 2>/dev/null | grep -q 'install ok installed'; then
  if [[ -z ${CI:-} ]]; then
    echo "run-all: slurm-ddp is already installed on this machine; purge it first (dpkg --purge slurm-ddp)" >&2
    exit 1
  fi
  echo "run-all: CI: purging the slurm-ddp $(dpkg-query -W -f='${Version}' slurm-ddp) already installed on this machine" >&2
  dpkg --purge slurm-ddp >/dev/null
fi
packaging/build-deb.sh
packaging/build-rpm.sh --source-only
# The older release for the upgrade and rolling-upgrade tests: 1d2248e, the
# last one whose drop-in named the plugin itself and whose agents speak
# rendezvous protocol 3 (about 2 minutes to build, once).
old_release=1d2248e
git cat-file -e "$old_release^{commit}" 2>/dev/null ||
  { echo "run-all: commit $old_release is not in this clone (a shallow clone?): git fetch --unshallow" >&2; exit 1; }
rm -rf build-old && mkdir -p build-old/src
git archive "$old_release" | tar -x -C build-old/src
BUILD_DIR="$PWD/build-old/build" build-old/src/packaging/build-deb.sh >/dev/null
old_deb=$(ls build-old/build/slurm-ddp_*.deb)
dpkg -i build-deb/slurm-ddp_*.deb
trap 'dpkg --purge slurm-ddp >/dev/null 2>&1 || true' EXIT
# A run stopped by a signal purges too (bash runs no EXIT trap on a signal
# it does not handle).
trap 'exit 143' TERM
trap 'exit 130' INT HUP
# What a user sees first: the options in the installed man page.
man -P cat spank-ddp 2>/dev/null | grep -q -- '--ddp-gpus' || { echo "run-all: man spank-ddp shows no options" >&2; exit 1; }
cmake -S . -B build -DDDP_TEST_INSTALLED=ON >/dev/null
# The node-loss tests (spares, min_nodes: 2 minutes, mostly Slurm declaring
# the lost node DOWN) test the agents, not the package's layout; the
# sanitizer build and the Debian 13 chroot run them.
ctest --test-dir build --output-on-failure -LE "unit|lint" -E 'integration\.(spares|min_nodes)$'
cmake -S . -B build -DDDP_TEST_INSTALLED=OFF >/dev/null
# A rolling upgrade: steps spanning a node of the older release (its plugin
# and agent) and nodes of this one, in both directions.
tests/package/mixed_versions.sh build-old/build/spank/spank_ddp.so build-old/build/agent/ddp-agent \
  /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_ddp.so /usr/bin/ddp-agent
# Removal, reinstall, upgrade from the older release and purge, on a real
# cluster whose plugstack.conf is Debian's (ends with the package purged).
tests/package/lifecycle.sh build-deb/slurm-ddp_*.deb "$old_deb"
