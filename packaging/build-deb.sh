#!/usr/bin/env bash
# Builds the Debian packages against the Slurm this machine has, the way a
# site builds them for its nodes (a SPANK plugin runs only with the Slurm
# release it was built against):
#
#   packaging/build-deb.sh      # -> build-deb/slurm-ddp_<version>_<arch>.deb
#                               #    build-deb/ddp-train_<version>_<arch>.deb
#   DDP_SLURM_PREFIX=/usr/local packaging/build-deb.sh   # Slurm installed from source there
#
# slurm-ddp: /usr/lib/<multiarch>/slurm-wlm/spank_ddp.so (or .../slurm when
# Debian's plugin folder is absent), /usr/bin/ddp-agent, /usr/sbin/ddp-check-config,
# /usr/lib/slurm-ddp/ (the package's plugstack line, libnccl-profiler-ddp.so),
# /etc/slurm/plugstack.conf.d/ddp.conf (conffile), /usr/share/slurm-ddp/cli_filter.lua,
# /usr/share/doc/slurm-ddp/examples/ddp.conf.example, man pages.
# ddp-train: /usr/bin/ddp-train, /usr/bin/ddp-train-plot, /usr/bin/ddp-tokenize,
# their man pages.
#
# slurm-ddp depends on the package that provides the Slurm found, pinned to
# its release, by the owner of slurm/spank.h (symlinks followed): Debian's
# libslurm-dev -> slurm-wlm-basic-plugins, SchedMD's slurm-smd-dev ->
# slurm-smd; a source install (no owner) gives no Slurm dependency. Another
# owner (a site's own Slurm packages) stops the build, which then needs
# DDP_SLURM_PACKAGE=slurm-wlm|slurm-smd|none; the variable overrides the guess
# in every case.
# DDP_BUILD_TRAINER=OFF builds slurm-ddp alone (no Gloo needed). CPU-only: the
# CUDA parts need NVIDIA's libraries, which Debian's archive does not carry
# (DDP_CUDA=ON to include them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BUILD_DIR:-build-deb}
# Unset variables leave a reused build folder's settings as they are.
opts=()
[[ -z ${DDP_SLURM_PREFIX+set} ]] || opts+=(-DDDP_SLURM_PREFIX="$DDP_SLURM_PREFIX")
[[ -z ${DDP_SLURM_PACKAGE:-} ]] || opts+=(-DDDP_SLURM_PACKAGE="$DDP_SLURM_PACKAGE")
[[ -z ${DDP_BUILD_TRAINER:-} ]] || opts+=(-DDDP_BUILD_TRAINER="$DDP_BUILD_TRAINER")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DDDP_BUILD_TESTS=OFF -DDDP_CUDA="${DDP_CUDA:-OFF}" "${opts[@]}" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
# Which Slurm, and so which dependency.
grep 'slurm-ddp: building against' "$log" || true
cmake --build "$out" -j"$(nproc)" >/dev/null
# An older release's packages left in a reused build folder would be picked
# with these by every `ls .../slurm-ddp_*.deb` after us.
rm -f "$out"/slurm-ddp_*.deb "$out"/ddp-train_*.deb
(cd "$out" && cpack -G DEB >/dev/null)
mapfile -t debs < <(ls "$out"/slurm-ddp_*.deb "$out"/ddp-train_*.deb 2>/dev/null)
for deb in "${debs[@]}"; do
  echo "build-deb: $deb (Depends: $(dpkg-deb -f "$deb" Depends))"
done
if command -v lintian >/dev/null; then
  # Errors fail the build; warnings are shown.
  lintian --fail-on error "${debs[@]}" || {
    echo "build-deb: lintian found errors" >&2
    exit 1
  }
fi
