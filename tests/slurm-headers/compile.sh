#!/usr/bin/env bash
# Compiles every source file of the plugin (spank/*.cpp) with warnings as
# errors against the public headers of each Slurm release line we support
# (the fixtures beside this script, one directory per line), so a change that
# breaks one release is caught here and not at a site. The plugin's launch
# path differs by release (spank_prepend_task_argv from 23.11 on): both
# branches get compiled this way.
# Usage: tests/slurm-headers/compile.sh SOURCE_DIR BUILD_DIR [CXX]
set -euo pipefail
src=${1:?usage: compile.sh SOURCE_DIR BUILD_DIR [CXX]}
build=${2:?usage: compile.sh SOURCE_DIR BUILD_DIR [CXX]}
cxx=${3:-c++}
fixtures=$src/tests/slurm-headers
releases=(22.05 23.02 23.11 24.05 24.11 25.05 25.11 26.05)
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -fPIC
  -I"$src/spank" -I"$src/common" -I"$build/common/generated"
  -DDDP_AGENT_DEFAULT_PATH=\"/usr/bin/ddp-agent\" -DDDP_CONFIG_DEFAULT_PATH=\"/etc/slurm/ddp.conf\")
[[ -f $build/common/generated/ddp/base/version.hpp ]] || { echo "compile.sh: configure $build first" >&2; exit 1; }

failed=()
for release in "${releases[@]}"; do
  headers=$fixtures/$release
  [[ -f $headers/slurm/spank.h ]] || { echo "compile.sh: no headers for Slurm $release in $headers" >&2; exit 1; }
  version=$(sed -n "s/^#define SLURM_VERSION_NUMBER \(0x[0-9a-fA-F]*\).*/\1/p" "$headers/slurm/slurm_version.h")
  log=$(mktemp)
  # Two files at a time: the machine has two cores.
  if printf '%s\n' "$src"/spank/*.cpp |
    xargs -P 2 -I{} "$cxx" "${flags[@]}" -I"$headers" {} >"$log" 2>&1; then
    echo "compile.sh: Slurm $release ($version): the plugin compiles"
  else
    cat "$log" >&2
    echo "compile.sh: Slurm $release ($version): FAILED" >&2
    failed+=("$release")
  fi
  rm -f "$log"
done
if ((${#failed[@]})); then
  echo "compile.sh: the plugin does not compile against Slurm ${failed[*]}" >&2
  exit 1
fi
echo "compile.sh: PASS (${#releases[@]} release lines)"
