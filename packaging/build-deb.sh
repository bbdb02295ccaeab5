#!/usr/bin/env bash
# Builds the Debian package, the way a site builds it for its nodes:
#
#   packaging/build-deb.sh            # -> build-deb/slurm-ddp_<version>_<arch>.deb
#
# Installed layout: /usr/lib/<multiarch>/slurm-wlm/spank_ddp.so, /usr/bin/ddp-agent,
# /usr/bin/ddp-train, /usr/bin/ddp-train-plot, /usr/bin/ddp-tokenize, /usr/lib/slurm-ddp/libnccl-profiler-ddp.so,
# /etc/slurm/plugstack.conf.d/ddp.conf
# (conffile), /etc/slurm/ddp.conf.example, man pages. The package depends on the
# Slurm release it was built against. CPU-only: the CUDA parts need NVIDIA's
# libraries, which Debian's archive does not carry (DDP_CUDA=ON to include them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BUILD_DIR:-build-deb}
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DDDP_BUILD_TESTS=OFF -DDDP_CUDA="${DDP_CUDA:-OFF}" >/dev/null
cmake --build "$out" -j"$(nproc)" >/dev/null
# An older release's package left in a reused build folder would be picked
# with this one by every `ls .../slurm-ddp_*.deb` after us.
rm -f "$out"/slurm-ddp_*.deb
(cd "$out" && cpack -G DEB >/dev/null)
deb=$(ls "$out"/slurm-ddp_*.deb)
echo "build-deb: $deb"
if command -v lintian >/dev/null; then
  # Errors fail the build; warnings are shown.
  lintian --fail-on error "$deb" || {
    echo "build-deb: lintian found errors" >&2
    exit 1
  }
fi
