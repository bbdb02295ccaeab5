#!/usr/bin/env bash
# spank_ddp.so exports exactly the symbols Slurm's loader looks up; the C++
# pitfalls (internal linkage of SPANK_PLUGIN's consts, mangled callbacks) would
# show up here as missing plugin_* or slurm_spank_* symbols.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
plugin=${1:?path to spank_ddp.so}

exported=$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort | tr '\n' ' ')
expect_eq "$exported" "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init slurm_spank_init_post_opt slurm_spank_task_init slurm_spank_user_init spank_plugin_version " "exported symbols"
# Not linked to libslurm: the host process (srun, slurmstepd) provides slurm_*.
ldd "$plugin" | grep -q libslurm && fail "spank_ddp.so must not link libslurm"
# Hardened: full RELRO and a stack protector.
readelf -d "$plugin" | grep -q 'BIND_NOW' || fail "spank_ddp.so is not linked with -z now"
readelf -lW "$plugin" | grep -q 'GNU_RELRO' || fail "spank_ddp.so has no RELRO segment"
pass "spank_ddp.so exports only plugin symbols and is hardened"
