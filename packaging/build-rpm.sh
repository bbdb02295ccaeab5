#!/usr/bin/env bash
# Builds the RPM from packaging/rpm/slurm-ddp.spec with rpmbuild, and lints it:
#
#   packaging/build-rpm.sh                # source and binary RPMs -> build-rpm/
#   packaging/build-rpm.sh --source-only  # source RPM + lint only (CI)
#   packaging/build-rpm.sh --without trainer                   # slurm-ddp alone: no gloo-devel
#   packaging/build-rpm.sh --define 'slurm_prefix /usr/local'  # Slurm installed from source there
#   packaging/build-rpm.sh --define 'slurm_package slurm-ohpc' # the Slurm package to require
#
# Options after --source-only go to rpmbuild. The binary RPMs: slurm-ddp and
# ddp-train (the spec's header says what each holds and which Slurm
# slurm-ddp requires).
#
# On Debian (rpm from the archive) BuildRequires name EL packages that dpkg
# knows nothing of, so they are not checked (--nodeps); the binary build uses
# Debian's libraries and checks that the spec builds and installs its files.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD/build-rpm
spec=packaging/rpm/slurm-ddp.spec
version=$(sed -n 's/^Version: *//p' "$spec")
rm -rf "$top"
mkdir -p "$top"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
# The source tarball from the working tree (git archive would miss uncommitted work).
tar --exclude-vcs --exclude='./build*' --exclude='./.gpu-kit' --transform "s|^\\.|slurm-ddp-$version|" \
  -czf "$top/SOURCES/slurm-ddp-$version.tar.gz" .
cp "$spec" "$top/SPECS/"
mode=-ba
[[ ${1:-} == --source-only ]] && { mode=-bs; shift; }
rpmbuild "$mode" --nodeps --define "_topdir $top" "$@" "$top/SPECS/slurm-ddp.spec" >"$top/rpmbuild.log" 2>&1 || {
  tail -n 40 "$top/rpmbuild.log" >&2
  echo "build-rpm: rpmbuild failed (log: $top/rpmbuild.log)" >&2
  exit 1
}
find "$top/RPMS" "$top/SRPMS" -name '*.rpm' -printf 'build-rpm: %p\n'
# rpmlint: errors fail, warnings are shown (packaging/rpmlintrc filters the
# ones that only say "this was built on Debian").
mapfile -t rpms < <(find "$top/RPMS" "$top/SRPMS" -name '*.rpm')
cat packaging/rpm/rpmlintrc >"$top/rpmlintrc"
[[ $mode == -ba ]] && cat packaging/rpm/rpmlintrc-binary >>"$top/rpmlintrc"
rpmlint -r "$top/rpmlintrc" "$spec" "${rpms[@]}" || {
  echo "build-rpm: rpmlint found errors" >&2
  exit 1
}
