#!/usr/bin/env bash
# NCCL all-reduce bandwidth across all GPUs of this machine, 4 KiB to 256 MiB,
# as nccl-tests reports it (algbw, and busbw = algbw * 2 (n - 1) / n), with
# every result checked. Compare the large-message busbw with the links:
# NVLink 4 (H100 SXM) reaches a few hundred GB/s, PCIe 4 x16 about 20 GB/s.
# Usage: tests/gpu/bandwidth.sh [iterations]   (BUILD_DIR as in smoke-1gpu.sh)
set -euo pipefail
# shellcheck source=tests/gpu/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_targets ddp-gpu-allreduce-bw
"$allreduce_bw" "$@"
