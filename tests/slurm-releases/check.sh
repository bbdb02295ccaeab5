#!/usr/bin/env bash
# By hand, not in CI (it needs a clone of Slurm, and CI has no network):
# compiles every source file of the plugin (spank/*.cpp) with warnings as
# errors against the public headers of each Slurm release line from 22.05 on,
# taken from SchedMD's repository at the newest maintenance tag of that line.
# CI builds the plugin only against the Slurm that Debian ships (22.05, 24.11,
# 26.05); this covers the lines in between and newer tags (doc/admin.md).
#
#   git clone --bare https://github.com/SchedMD/slurm.git /tmp/slurm.git
#   cmake -S . -B build -DDDP_WERROR=ON -DDDP_TEST_INSTALLED=OFF
#   tests/slurm-releases/check.sh /tmp/slurm.git [BUILD_DIR]
#
# BUILD_DIR (default: build) is a configured build directory; only its
# generated headers are used. For each line, the headers (slurm/slurm.h,
# slurm_errno.h, spank.h, slurmdb.h) are written with `git show TAG:PATH` to a
# temporary directory that is removed afterwards, never into this tree, and
# slurm_version.h is made from the tag's slurm_version.h.in as configure makes
# it (SLURM_VERSION_NUMBER from the tag's META). One line per release:
#   PASS 24.11 slurm-24-11-7-1 defaf214db2e55326f45ab08f1bde5b2036d9f5d 0x180b07
# and the compiler's messages for a FAIL. Exit status 1 when any release fails.
# CXX (default g++) is the compiler; SLURM_RELEASES (default "22.05 23.02 23.11
# 24.05 24.11 25.05 25.11 26.05") the lines checked.
set -euo pipefail
usage="usage: tests/slurm-releases/check.sh SLURM_GIT_DIR [BUILD_DIR]"
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
slurm_git=${1:?$usage}
build=$(realpath -m "${2:-$src/build}")
cxx=${CXX:-g++}
read -r -a releases <<<"${SLURM_RELEASES:-22.05 23.02 23.11 24.05 24.11 25.05 25.11 26.05}"

git -C "$slurm_git" rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "check.sh: $slurm_git is not a git repository (a clone of https://github.com/SchedMD/slurm)" >&2; exit 2; }
[[ -f $build/common/generated/ddp/base/version.hpp ]] ||
  { echo "check.sh: configure $build first (cmake -S . -B $build -DDDP_TEST_INSTALLED=OFF)" >&2; exit 2; }

work=$(mktemp -d /tmp/ddp-slurm-releases.XXXXXX)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -fPIC
  -I "$src/spank" -I "$src/common" -I "$build/common/generated"
  -DDDP_AGENT_DEFAULT_PATH='"/usr/bin/ddp-agent"' -DDDP_CONFIG_DEFAULT_PATH='"/etc/slurm/ddp.conf"'
  -DDDP_PLUGSTACK_INCLUDE_DIR='"/etc/slurm/plugstack.conf.d"')
sources=("$src"/spank/*.cpp)

# headers TAG DIR: the tag's public headers into DIR/slurm/, and slurm_version.h
# as configure writes it (AC_CONFIG_HEADERS; auxdir/slurm.m4 sets the number
# from META with printf "0x%02x%02x%02x" MAJOR MINOR MICRO). Prints the number.
headers() {
  local tag=$1 dir=$2/slurm meta major minor micro num f
  mkdir -p "$dir"
  for f in slurm.h slurm_errno.h spank.h slurmdb.h; do
    git -C "$slurm_git" show "$tag:slurm/$f" >"$dir/$f" || return 1
  done
  meta=$(git -C "$slurm_git" show "$tag:META") || return 1
  major=$(sed -n 's/^[[:space:]]*Major:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$meta")
  minor=$(sed -n 's/^[[:space:]]*Minor:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$meta")
  micro=$(sed -n 's/^[[:space:]]*Micro:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$meta")
  [[ -n $major && -n $minor && -n $micro ]] || { echo "check.sh: $tag: no version in META" >&2; return 1; }
  # The tag's name says the same version (slurm-MAJOR-MINOR-MICRO-N).
  [[ $tag == "slurm-$major-$minor-$micro-"* ]] || { echo "check.sh: $tag: META says $major.$minor.$micro" >&2; return 1; }
  num=$(printf '0x%02x%02x%02x' "$((10#$major))" "$((10#$minor))" "$((10#$micro))")
  { echo '/* slurm/slurm_version.h.  Generated from slurm_version.h.in by configure.  */'
    git -C "$slurm_git" show "$tag:slurm/slurm_version.h.in"; } |
    sed "s/^#undef SLURM_VERSION_NUMBER\$/#define SLURM_VERSION_NUMBER $num/" >"$dir/slurm_version.h"
  [[ $(grep -c "^#define SLURM_VERSION_NUMBER $num\$" "$dir/slurm_version.h") == 1 ]] ||
    { echo "check.sh: $tag: slurm_version.h.in has no '#undef SLURM_VERSION_NUMBER' line" >&2; return 1; }
  echo "$num"
}

failed=0
for release in "${releases[@]}"; do
  # The newest maintenance tag of the line (slurm-24-11-7-1; not 0-0rc1).
  pattern="slurm-${release/./-}-"
  tag=$(git -C "$slurm_git" tag -l "$pattern*" | grep -E '^slurm-[0-9]+-[0-9]+-[0-9]+-[0-9]+$' | sort -V | tail -1 || true)
  if [[ -z $tag ]]; then
    echo "FAIL $release (no tag $pattern* in $slurm_git)"
    failed=1
    continue
  fi
  commit=$(git -C "$slurm_git" rev-parse "$tag^{commit}")
  dir=$work/$release
  log=$work/$release.log
  if ! num=$(headers "$tag" "$dir" 2>"$log"); then
    cat "$log" >&2
    echo "FAIL $release $tag $commit (headers)"
    failed=1
    continue
  fi
  # First, that the compiler reads these headers and not an installed Slurm's;
  # then every source file of the plugin, as many at a time as there are cores.
  probe=$work/$release-probe.cpp
  printf '#include "slurm.hpp"\nstatic_assert(SLURM_VERSION_NUMBER == %s);\n' "$num" >"$probe"
  if "$cxx" "${flags[@]}" -I "$dir" "$probe" >"$log" 2>&1 &&
    printf '%s\0' "${sources[@]}" |
    xargs -0 -P "$(nproc)" -I{} "$cxx" "${flags[@]}" -I "$dir" {} >>"$log" 2>&1; then
    echo "PASS $release $tag $commit $num"
  else
    cat "$log" >&2
    echo "FAIL $release $tag $commit $num"
    failed=1
  fi
done
exit "$failed"
