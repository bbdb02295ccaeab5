#!/bin/sh
# Regenerate the Slurm header fixtures from a clone of
# https://github.com/SchedMD/slurm.  Usage: regen.sh /path/to/slurm.git
# Headers are copied byte-for-byte with `git show TAG:slurm/FILE`;
# slurm_version.h is produced from slurm/slurm_version.h.in exactly as
# autoconf's config.status does (AC_CONFIG_HEADERS): a "Generated from"
# comment line is prepended and the single
# "#undef SLURM_VERSION_NUMBER" line becomes
# "#define SLURM_VERSION_NUMBER 0xMMmmuu" (auxdir/slurm.m4, from META).
set -eu
GIT_DIR=${1:?usage: $0 /path/to/slurm.git}
export GIT_DIR
OUT=$(cd "$(dirname "$0")" && pwd)

for tag in slurm-22-05-11-1 slurm-23-02-8-1 slurm-23-11-11-1 slurm-24-05-8-1 \
           slurm-24-11-5-1 slurm-25-05-8-1 slurm-25-11-7-1 slurm-26-05-3-1; do
	meta=$(git show "$tag:META")
	major=$(printf '%s\n' "$meta" | sed -n 's/^[[:space:]]*Major:[[:space:]]*\([0-9]*\).*/\1/p')
	minor=$(printf '%s\n' "$meta" | sed -n 's/^[[:space:]]*Minor:[[:space:]]*\([0-9]*\).*/\1/p')
	micro=$(printf '%s\n' "$meta" | sed -n 's/^[[:space:]]*Micro:[[:space:]]*\([0-9]*\).*/\1/p')
	dir="$OUT/$major.$minor/slurm"
	rm -rf "$dir"
	mkdir -p "$dir"
	for f in slurm.h slurm_errno.h spank.h slurmdb.h; do
		if git cat-file -e "$tag:slurm/$f" 2>/dev/null; then
			git show "$tag:slurm/$f" > "$dir/$f"
		fi
	done
	num=$(printf '0x%02x%02x%02x' "${major#0}" "${minor#0}" "${micro#0}")
	{ echo '/* slurm/slurm_version.h.  Generated from slurm_version.h.in by configure.  */'
	  git show "$tag:slurm/slurm_version.h.in"; } |
		sed "s/^#undef SLURM_VERSION_NUMBER\$/#define SLURM_VERSION_NUMBER $num/" \
		> "$dir/slurm_version.h"
	grep -q "^#define SLURM_VERSION_NUMBER $num\$" "$dir/slurm_version.h"
	echo "$major.$minor $tag $(git rev-parse "$tag^{commit}") $num"
done
