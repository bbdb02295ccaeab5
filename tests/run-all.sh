#!/usr/bin/env bash
# Every test, from a fresh clone: install dependencies, build with warnings as
# errors (CUDA parts too when /usr/local/cuda exists), run all CTest tests
# (Check unit tests, then the integration tests on local Slurm clusters).
# Needs root: the test clusters use network namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake -S . -B build -DDDP_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure
