#!/usr/bin/env bash
# The packages' life on a node, as an admin lives it: installed, removed
# (`apt remove` keeps conffiles, and so keeps the plugstack drop-in), installed
# again, upgraded from an older release, purged. On a real cluster (Slurm's
# daemons, tests/cluster/cluster.sh) whose plugstack.conf is Debian's own:
# `include /etc/slurm/plugstack.conf.d/*.conf`.
#
# After removal, slurmd starts and plain srun works, on the compute nodes and
# on the host srun runs on (a login host); after installing again, --ddp works
# again; an upgrade from OLD.deb (one package, slurm-ddp, before 0.5.0) to
# slurm-ddp and ddp-train leaves the new drop-in, hands the trainer's files to
# ddp-train and removes the old example conffile (an edited one kept as
# .dpkg-bak until purge); after purge nothing of ours is left.
#
#   tests/package/lifecycle.sh NEW.deb [OLD.deb]     # root; NEW may be installed already
#
# NEW.deb is slurm-ddp's; ddp-train's of the same version, beside it, is
# installed with it when it is there (a node that trains with ddp-train).
set -euo pipefail
new=$(realpath "${1:?usage: lifecycle.sh NEW.deb [OLD.deb]}")
old=${2:+$(realpath "$2")}
version=$(dpkg-deb -f "$new" Version)
news=("$new")
trainer=$(ls "$(dirname "$new")"/ddp-train_"${version}"_*.deb 2>/dev/null || true)
[[ -z $trainer ]] || news+=("$trainer")
cd "$(dirname "$0")/../.."
cluster=tests/cluster/cluster.sh
name=pkglife
dropin=/etc/slurm/plugstack.conf.d/ddp.conf
old_example=/etc/slurm/ddp.conf.example
plugin_dir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm

fail() { echo "lifecycle: FAIL: $*" >&2; exit 1; }
say() { echo "lifecycle: $*"; }

# What every node installs pulls in neither the trainer's libraries nor
# PyTorch: slurm-ddp's Depends and Recommends name no Gloo, OpenBLAS or torch
# (Suggests may), and the trainer's files are ddp-train's alone.
relations="$(dpkg-deb -f "$new" Depends) $(dpkg-deb -f "$new" Pre-Depends) $(dpkg-deb -f "$new" Recommends)"
[[ ! $relations =~ gloo|openblas|blas|torch ]] || fail "slurm-ddp pulls in the trainer's or PyTorch's packages: $relations"
! dpkg-deb -c "$new" | grep -q 'usr/bin/ddp-train' || fail "slurm-ddp carries ddp-train's files"

plugstack=$(mktemp)
work=$(mktemp -d)
echo "include /etc/slurm/plugstack.conf.d/*.conf" >"$plugstack"
trap '"$cluster" down --name "$name" >/dev/null 2>&1 || true; rm -rf "$plugstack" "$work"' EXIT
"$cluster" up --name "$name" --nodes 2 --plugstack "$plugstack" >/dev/null
eval "$("$cluster" env --name "$name")"
nodes=("$name-n0" "$name-n1")

# Every slurmd again, as after a reboot or a restart by the admin; each must
# come up and its node be idle, not down or drained.
restart_slurmds() {
  for i in 0 1; do
    pkill -f "slurmd -N ${nodes[i]} " || true
  done
  sleep 1
  for i in 0 1; do "$cluster" start-slurmd --name "$name" "$i" >"$work/start.log" 2>&1 || true; done
  local state=""
  for _ in $(seq 30); do
    state=$(sinfo -h -N -o '%T' | sort -u | tr '\n' ' ')
    [[ $state == "idle " ]] && pgrep -f "slurmd -N ${nodes[0]} " >/dev/null &&
      pgrep -f "slurmd -N ${nodes[1]} " >/dev/null && return 0
    sleep 1
  done
  tail -5 "/tmp/slurm-ddp-clusters/$name/log/slurmd-${nodes[0]}.log" >&2 || true
  fail "$1: slurmd did not come back (nodes: $state)"
}

ddp_works() {  # ddp_works WHAT: a 2-node --ddp step runs both ranks
  local out
  out=$(timeout 90 srun -N2 --ddp=cpu printenv RANK 2>"$work/err" | sed 's/^\[rank [0-9]*\] //' | sort | tr '\n' ' ') ||
    { cat "$work/err" >&2; fail "$1: srun --ddp failed"; }
  [[ $out == "0 1 " ]] || fail "$1: ranks '$out', expected '0 1 '"
}

plain_works() {  # plain_works WHAT: plain srun runs, --ddp is an unknown option
  timeout 60 srun -N2 true 2>"$work/err" || { cat "$work/err" >&2; fail "$1: plain srun failed"; }
  if timeout 60 srun -N1 --ddp true 2>"$work/err"; then fail "$1: srun --ddp still ran"; fi
  grep -q "unrecognized option '--ddp'" "$work/err" || { cat "$work/err" >&2; fail "$1: srun --ddp gave another error"; }
}

dpkg -i "${news[@]}" >/dev/null
ddp_works "installed"
[[ -f /usr/share/doc/slurm-ddp/examples/ddp.conf.example && ! -e $old_example ]] ||
  fail "the example site config is not in /usr/share/doc/slurm-ddp/examples alone"
say "installed (${news[*]##*/}): srun --ddp runs"

dpkg -r slurm-ddp >/dev/null
[[ -f $dropin ]] || fail "apt remove took the conffile $dropin (dpkg keeps conffiles)"
[[ ! -e $plugin_dir/spank_ddp.so ]] || fail "apt remove left spank_ddp.so"
plain_works "removed"
restart_slurmds "removed"
plain_works "removed, slurmd restarted"
say "removed (conffile kept): slurmd restarts, nodes idle, plain srun runs, --ddp unknown"

dpkg -i "$new" >/dev/null
ddp_works "installed again"
say "installed again: srun --ddp runs"

if [[ -n $old ]]; then
  dpkg --purge slurm-ddp ddp-train >/dev/null
  dpkg -i "$old" >/dev/null
  ddp_works "the older release"
  # The old release's example conffile, edited by the admin: kept aside.
  [[ -f $old_example ]] || fail "$(basename "$old") installed no $old_example"
  echo "# the admin's edit" >>"$old_example"
  dpkg -i "${news[@]}" >/dev/null
  grep -q "^include " "$dropin" || fail "the upgrade kept the older drop-in: $(grep -v '^#' "$dropin")"
  [[ ! -e $old_example && -f $old_example.dpkg-bak ]] ||
    fail "the upgrade did not set the edited $old_example aside as .dpkg-bak"
  if [[ -n $trainer ]]; then
    [[ $(dpkg-query -S /usr/bin/ddp-train) == "ddp-train: /usr/bin/ddp-train" ]] ||
      fail "/usr/bin/ddp-train is not ddp-train's after the upgrade: $(dpkg-query -S /usr/bin/ddp-train)"
  fi
  ddp_works "upgraded"
  dpkg -r slurm-ddp >/dev/null
  restart_slurmds "upgraded, then removed"
  plain_works "upgraded, then removed"
  dpkg -i "$new" >/dev/null
  say "upgraded from $(basename "$old"): the new drop-in, the trainer in ddp-train, the old example conffile set aside, --ddp runs; removed after: slurmd restarts"
fi

dpkg --purge slurm-ddp ddp-train >/dev/null
left=$(ls "$plugin_dir/spank_ddp.so" /usr/bin/ddp-agent /usr/bin/ddp-train /usr/lib/slurm-ddp "$dropin" \
  "$old_example" "$old_example.dpkg-bak" /usr/share/doc/slurm-ddp /usr/share/man/man8/spank-ddp.8.gz 2>/dev/null || true)
[[ -z $left ]] || fail "purge left files behind: $left"
restart_slurmds "purged"
plain_works "purged"
say "purged: nothing of ours left; slurmd restarts, plain srun runs"
