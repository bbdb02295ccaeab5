#!/usr/bin/env bash
# cmake/find_nccl.cmake finds NCCL in each layout a site or a GPU image has:
# a toolkit (lib64/libnccl.so), a runtime-only install (libnccl.so.2, no
# libnccl.so link) and a Python wheel (site-packages/nvidia/nccl/lib/libnccl.so.2),
# given as DDP_NCCL_ROOT. Files are empty stand-ins: finding is by name.
# Usage: tests/cmake/find_nccl.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: find_nccl.sh SOURCE_DIR}" && pwd)
work=$(mktemp -d /tmp/ddp-find-nccl.XXXXXX)
trap 'rm -rf "$work"' EXIT

# check NAME ROOT EXPECTED_LIBRARY: configure against ROOT, expect that library.
check() {
  local name=$1 root=$2 expect=$3
  if ! cmake -S "$src/tests/cmake/find_nccl" -B "$work/build-$name" -DDDP_SOURCE_DIR="$src" \
    -DDDP_NCCL_ROOT="$root" -DEXPECT_LIBRARY="$expect" -DEXPECT_INCLUDE="$root/include" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    echo "find_nccl: FAIL: $name layout ($root)" >&2
    exit 1
  fi
  echo "find_nccl: $name layout: found $expect"
}

toolkit=$work/toolkit
mkdir -p "$toolkit/include" "$toolkit/lib64"
touch "$toolkit/include/nccl.h" "$toolkit/lib64/libnccl.so.2"
ln -s libnccl.so.2 "$toolkit/lib64/libnccl.so"
check toolkit "$toolkit" "$toolkit/lib64/libnccl.so"

runtime=$work/runtime
mkdir -p "$runtime/include" "$runtime/lib"
touch "$runtime/include/nccl.h" "$runtime/lib/libnccl.so.2"
check runtime-only "$runtime" "$runtime/lib/libnccl.so.2"

wheel=$work/venv/lib/python3.12/site-packages/nvidia/nccl
mkdir -p "$wheel/include" "$wheel/lib"
touch "$wheel/include/nccl.h" "$wheel/lib/libnccl.so.2"
check wheel "$wheel" "$wheel/lib/libnccl.so.2"
echo "find_nccl: PASS"
