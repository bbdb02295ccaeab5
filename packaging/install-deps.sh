#!/usr/bin/env bash
# Installs everything slurm-ddp needs to build, test and run its local cluster,
# from Debian's own archive only. Idempotent: a second run installs nothing and
# finishes in a second or two. Run as root (CI and fresh machines are root).
#
#   packaging/install-deps.sh            # build + test dependencies
#
# CUDA is optional and never installed here: when /usr/local/cuda has nvcc and
# NCCL, CMake builds the CUDA parts too.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config
  # Slurm 22.05: headers for the plugin, daemons and clients for the local cluster
  libslurm-dev slurmctld slurmd slurm-client
  # libraries the plugin, agent and trainer use
  libhwloc-dev hwloc libspdlog-dev libfmt-dev libcli11-dev libgloo-dev
  libopenblas-dev zlib1g-dev nlohmann-json3-dev
  # OpenBLAS as the system libblas.so.3 too: Debian's torch (the benchmarks'
  # peer) otherwise runs on the slow reference BLAS
  libopenblas0-pthread
  # ddp-train-plot: metrics to PNG
  gnuplot-nox
  # packages: .deb (dpkg-dev for dpkg-shlibdeps, lintian) and .rpm (rpmbuild, rpmlint)
  dpkg-dev lintian rpm rpmlint man-db
  # libcrypto (HMAC-SHA256) for the rendezvous authentication
  libssl-dev
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
  # the local multi-node cluster: network namespaces, veth, bridge; munge for
  # the configless cluster (Slurm's packages pull it in; named for clarity)
  iproute2 util-linux procps munge
  # PyTorch compatibility tests and the real dataset; the language model's
  # text (fortune's cookies, plain text in Debian 12, 13 and unstable alike)
  python3 python3-torch dataset-fashion-mnist fortunes
  # the GPU kit's check: a minimal Debian chroot (tests/gpu/kit-check.sh)
  mmdebstrap
)

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps.sh: must run as root (it calls apt-get); try: sudo $0" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' \
    || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends keeps the CI machine lean; what we need is listed above.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged daemons on install; the tests run their own, with
# their own configs, so the system-wide ones must not hold ports or pid files.
for svc in slurmctld slurmd; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
echo "install-deps.sh: done"
