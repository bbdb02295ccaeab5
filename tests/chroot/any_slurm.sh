#!/usr/bin/env bash
# The packages built against a Slurm that is not Debian's, inside a chroot
# whose Slurm is Debian's (tests/chroot/run.sh SUITE --any-slurm runs it there,
# as root, from the source tree): that Slurm's files relocated under
# /usr/local as a source install lays them out (bin, sbin, lib/slurm,
# lib/libslurm.so, include/slurm) and Debian's Slurm packages removed. Then,
# each built there with `DDP_SLURM_PREFIX=/usr/local packaging/build-deb.sh`:
#
#   source install  nothing owns spank.h: slurm-ddp depends on no Slurm and
#                   no libslurm package
#   SchedMD's       stand-ins made with equivs for slurm-smd and slurm-smd-dev
#                   (the latter owning the headers, in /usr/include/slurm as
#                   SchedMD's; the build then has no Slurm prefix):
#                   slurm-ddp depends on slurm-smd of this release, and
#                   installs with that alone
#   a site's own    an equivs package slurm-site-dev owning the headers (a
#                   site that packages Slurm itself): configuring stops and
#                   names slurm-site-dev and DDP_SLURM_PACKAGE, also when the
#                   headers are reached through a symlinked include folder;
#                   with DDP_SLURM_PACKAGE=none it configures (configure
#                   only: seconds)
#
# Each package installs with dpkg (no Debian Slurm package installed) and a
# 2-node --ddp step runs on a local cluster of the relocated daemons
# (tests/cluster/cluster.sh --slurm /usr/local). On exit the relocated files
# go and Debian's packages come back from /var/cache/ddp-slurm-debs (where
# run.sh puts them), so a kept chroot is as it was.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in equivs-build patchelf; do
  command -v "$tool" >/dev/null || { echo "any_slurm: $tool is missing: a chroot made before tests/chroot/run.sh listed it" >&2; exit 1; }
done
prefix=/usr/local
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
slurm_lib=/usr/lib/$multiarch/slurm-wlm
debs=/var/cache/ddp-slurm-debs
cluster=tests/cluster/cluster.sh
name=${DDP_CLUSTER_PREFIX:-as}any
build=/build-any
work=$(mktemp -d)

fail() { echo "any_slurm: FAIL: $*" >&2; exit 1; }
say() { echo "any_slurm: $*"; }

version=$(dpkg-query -W -f='${Version}' slurmd)
release=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' <<<"$version")
# Debian's Slurm packages here: those of the source package slurm-wlm.
mapfile -t slurm_pkgs < <(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package} ${source:Package}\n' |
  awk '$1 == "ii" && $3 == "slurm-wlm" { sub(/:.*/, "", $2); print $2 }')
((${#slurm_pkgs[@]})) || fail "no Debian Slurm package installed"
for p in "${slurm_pkgs[@]}"; do
  compgen -G "$debs/${p}_${version}_*.deb" >/dev/null || fail "no $p $version in $debs to restore it after"
done
relocated=()

restore() {
  "$cluster" down --name "$name" >/dev/null 2>&1 || true
  dpkg --purge slurm-ddp slurm-smd-dev slurm-smd slurm-site-dev >/dev/null 2>&1 || true
  rm -rf "${relocated[@]}" "$work"
  local files=()
  for p in "${slurm_pkgs[@]}"; do files+=("$debs/${p}_${version}_"*.deb); done
  dpkg -i "${files[@]}" >/dev/null || echo "any_slurm: restoring Debian's Slurm failed: dpkg -i ${files[*]}" >&2
  ldconfig
}
trap restore EXIT

# Debian's Slurm as a source install under /usr/local: the programs look for
# libslurmfull and the plugins in lib/slurm (their RUNPATH), libslurm in lib.
say "Slurm $version from ${slurm_pkgs[*]} relocated to $prefix"
mkdir -p "$prefix"/{bin,sbin,lib/slurm,include}
# The daemons are /usr/sbin/slurmd-wlm and so on in Debian 13 (update-alternatives
# names them slurmd): a source install's names.
while read -r f; do
  [[ -f $f && ! -L $f ]] || continue
  base=${f##*/}
  base=${base%-wlm}
  case $f in
    /usr/sbin/slurm*) cp "$f" "$prefix/sbin/$base"; relocated+=("$prefix/sbin/$base") ;;
    /usr/bin/*) cp "$f" "$prefix/bin/$base"; relocated+=("$prefix/bin/$base") ;;
  esac
done < <(dpkg -L slurmctld slurmd slurm-client)
cp "$slurm_lib"/*.so "$prefix/lib/slurm/"
cp -P "/usr/lib/$multiarch"/libslurm.so* "$prefix/lib/"
cp -r /usr/include/slurm "$prefix/include/"
relocated+=("$prefix/lib/slurm" "$prefix"/lib/libslurm.so* "$prefix/include/slurm")
for f in "$prefix"/sbin/slurm* "$prefix"/bin/* "$prefix"/lib/slurm/*.so; do
  [[ -f $f ]] && readelf -d "$f" 2>/dev/null | grep -q 'R.*PATH' && patchelf --set-rpath "$prefix/lib/slurm:$prefix/lib" "$f"
done
dpkg --remove --force-depends "${slurm_pkgs[@]}" >/dev/null 2>&1
ldconfig
[[ ! -e /usr/include/slurm/spank.h && -x $prefix/sbin/slurmd ]] || fail "the relocation left Debian's Slurm in place"

plugstack=$work/plugstack.conf
echo "include /etc/slurm/plugstack.conf.d/*.conf" >"$plugstack"
# The package built here against the Slurm in /usr/local, checked, installed,
# and a 2-node --ddp step on the relocated daemons.
build_and_run() {  # build_and_run WHAT SLURM-PREFIX EXPECTED-DEPENDS-PATTERN (none: no Slurm package at all)
  local what=$1 slurm_prefix=$2 pattern=$3 deb depends out
  rm -f "$build"/slurm-ddp_*.deb
  BUILD_DIR=$build DDP_SLURM_PREFIX=$slurm_prefix DDP_BUILD_TRAINER=OFF packaging/build-deb.sh
  deb=$(ls "$build"/slurm-ddp_*.deb)
  depends=$(dpkg-deb -f "$deb" Depends)
  if [[ $pattern == none ]]; then
    [[ $depends != *slurm* ]] || fail "$what: depends on a Slurm package: $depends"
  else
    # shellcheck disable=SC2053 # the pattern is one
    [[ $depends == $pattern ]] || fail "$what: Depends: $depends"
  fi
  [[ $depends != *libslurm* && $depends != *slurm-wlm* ]] || fail "$what: depends on Debian's Slurm: $depends"
  ! dpkg-query -W -f='${db:Status-Abbrev} ${source:Package}\n' 2>/dev/null | grep -q '^ii  *slurm-wlm$' ||
    fail "$what: a Debian Slurm package is installed"
  dpkg -i "$deb" >/dev/null || fail "$what: dpkg -i $deb"
  "$cluster" up --name "$name" --nodes 2 --slurm "$prefix" --plugstack "$plugstack" >/dev/null
  eval "$("$cluster" env --name "$name")"
  out=$(timeout 90 srun -N2 --ddp=cpu printenv RANK 2>"$work/err" | sed 's/^\[rank [0-9]*\] //' | sort | tr '\n' ' ') ||
    { cat "$work/err" >&2; fail "$what: srun --ddp failed"; }
  [[ $out == "0 1 " ]] || { cat "$work/err" >&2; fail "$what: ranks '$out', expected '0 1 '"; }
  "$cluster" down --name "$name" >/dev/null
  dpkg --purge slurm-ddp >/dev/null
  say "$what: $(basename "$deb") (Depends: $depends) installed; srun --ddp ran 2 ranks on Slurm in $prefix"
}

# The build folder configured once for both, as run.sh's: no debug information.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DDDP_BUILD_TESTS=OFF -DDDP_BUILD_BENCH=OFF \
  -DDDP_BUILD_TRAINER=OFF -DDDP_CUDA=OFF -DDDP_SLURM_PREFIX="$prefix" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null

build_and_run "source install" "$prefix" none

# SchedMD's package names, made with equivs: slurm-smd (the daemons' and
# plugins' package, which the plugin's dependency names) and slurm-smd-dev
# (the headers, in /usr/include as SchedMD's; dh_usrlocal refuses a package
# with files in /usr/local): spank.h's owner tells the build which Slurm it
# has. libslurm stays in /usr/local/lib, which no package owns.
mv "$prefix/include/slurm" "$work/headers"
(
  cd "$work"
  printf '%s\n' "Section: admin" "Package: slurm-smd" "Version: $version" \
    "Description: stand-in for SchedMD's slurm-smd (tests/chroot/any_slurm.sh)" \
    " Slurm $version relocated under $prefix stands for SchedMD's package." >slurm-smd.ctl
  {
    printf '%s\n' "Section: devel" "Package: slurm-smd-dev" "Version: $version" "Depends: slurm-smd (= $version)"
    printf 'Files:'
    for h in "$work"/headers/*.h; do printf ' %s /usr/include/slurm/\n' "$h"; done
    printf '%s\n' "Description: stand-in for SchedMD's slurm-smd-dev (tests/chroot/any_slurm.sh)" \
      " The headers of Slurm $version, relocated under $prefix."
  } >slurm-smd-dev.ctl
  equivs-build slurm-smd.ctl >/dev/null
  equivs-build slurm-smd-dev.ctl >/dev/null
  dpkg -i slurm-smd_*.deb slurm-smd-dev_*.deb >/dev/null
)
[[ $(dpkg-query -S /usr/include/slurm/spank.h) == "slurm-smd-dev: "* ]] || fail "slurm-smd-dev does not own spank.h"
next=$(awk -F. '{ printf "%d.%02d", $1, $2 + 1 }' <<<"$release")
build_and_run "SchedMD's slurm-smd" "" "slurm-smd (>= $release~), slurm-smd (<< $next~)*"

# A site's own Slurm packages: spank.h's owner is neither Debian's nor
# SchedMD's, so the build cannot name the package the plugin depends on and
# must ask. Configured only, in a folder of its own.
dpkg --purge slurm-smd-dev slurm-smd >/dev/null
(
  cd "$work"
  {
    printf '%s\n' "Section: devel" "Package: slurm-site-dev" "Version: $version"
    printf 'Files:'
    for h in "$work"/headers/*.h; do printf ' %s /usr/include/slurm/\n' "$h"; done
    printf '%s\n' "Description: a site's own Slurm headers (tests/chroot/any_slurm.sh)" \
      " The headers of Slurm $version, packaged by a site."
  } >slurm-site-dev.ctl
  equivs-build slurm-site-dev.ctl >/dev/null
  dpkg -i slurm-site-dev_*.deb >/dev/null
)
[[ $(dpkg-query -S /usr/include/slurm/spank.h) == "slurm-site-dev: "* ]] || fail "slurm-site-dev does not own spank.h"
# The same headers through a symlinked include folder: dpkg knows them by
# their real path only.
mkdir -p "$work/site"
ln -s /usr/include "$work/site/include"
ln -s "$prefix/lib" "$work/site/lib"
site_build=$work/build-site
configure_site() {  # configure_site CMAKE-ARGS...: the configuration's output in $work/configure
  rm -rf "$site_build"
  cmake -S . -B "$site_build" -DDDP_BUILD_TESTS=OFF -DDDP_BUILD_BENCH=OFF -DDDP_BUILD_TRAINER=OFF \
    -DDDP_CUDA=OFF -DCMAKE_INSTALL_PREFIX=/usr "$@" >"$work/configure" 2>&1
}
for slurm_prefix in "" "$work/site"; do
  what="a site's slurm-site-dev${slurm_prefix:+ through the symlink $work/site/include}"
  ! configure_site -DDDP_SLURM_PREFIX="$slurm_prefix" || fail "$what: configured, guessing: $(grep 'building against' "$work/configure")"
  out=$(tr -s ' \n' ' ' <"$work/configure")
  [[ $out == *"belongs to the package slurm-site-dev"* && $out == *"-DDDP_SLURM_PACKAGE=slurm-wlm|slurm-smd|none"* ]] ||
    { cat "$work/configure" >&2; fail "$what: the configuration does not name slurm-site-dev and DDP_SLURM_PACKAGE"; }
  configure_site -DDDP_SLURM_PREFIX="$slurm_prefix" -DDDP_SLURM_PACKAGE=none ||
    { cat "$work/configure" >&2; fail "$what: DDP_SLURM_PACKAGE=none did not configure"; }
  grep -q 'slurm-ddp: building against .*(package: none)' "$work/configure" || fail "$what: $(grep 'building against' "$work/configure")"
  say "$what: configuring stopped and named slurm-site-dev and DDP_SLURM_PACKAGE; with DDP_SLURM_PACKAGE=none it configured"
done
dpkg --purge slurm-site-dev >/dev/null
