#!/usr/bin/env bash
# Proves the GPU kit (tests/gpu/kit.sh) self-contained without a GPU: a
# minimal Debian chroot (mmdebstrap --variant=minbase: none of our build
# dependencies, no Python, no OpenBLAS, Gloo, spdlog or OpenSSL) gets the
# unpacked kit and, standing in for the GPU machine's PyTorch wheels, exactly
# three files of the CUDA toolkit here: libcublas.so.13, libcublasLt.so.13 and
# libnccl.so.2. Inside it, every program must resolve every other library to
# the kit's lib/ (ldd), and run-gpu.sh --device cpu must pass: the programs
# start, say clearly that there is no GPU, train one epoch on the CPU and give
# the same parameters on 1 and 2 ranks. And the kit's Slurm (run-gpu.sh
# --rows slurm): the chroot has no Slurm, so the daemons and srun that bring
# up its two-node cluster and run `srun --ddp` there are the kit's own files;
# ddp-train's rows run in full, the Python rows as their stand-ins
# (scripts/standin.sh: the launch path only, as there is no Python).
#
#   tests/gpu/kit-check.sh [--kit FILE] [--suite bookworm] [--mirror URI]
#
# Needs root (chroot, mounts) and Debian's archive (mmdebstrap, about 15 s).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kit=$repo/.gpu-kit/ddp-gpu-kit.tar.gz
suite=bookworm
mirror=http://deb.debian.org/debian
while (($#)); do
  case $1 in
    --kit) kit=$(realpath -m "${2:?}"); shift 2 ;;
    --suite) suite=${2:?}; shift 2 ;;
    --mirror) mirror=${2:?}; shift 2 ;;
    *) echo "kit-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) == 0 ]] || { echo "kit-check.sh: needs root (chroot and mounts)" >&2; exit 1; }
[[ -f $kit ]] || { echo "kit-check.sh: no kit at $kit: build it with tests/gpu/kit.sh" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "kit-check.sh: mmdebstrap is missing: run packaging/install-deps.sh test" >&2; exit 1; }
cuda_libs=/usr/local/cuda/lib64
machine_libs=(libcublas.so.13 libcublasLt.so.13 libnccl.so.2)

root=$(mktemp -d /var/tmp/ddp-kit-chroot.XXXXXX)
mounts=()
cleanup() {
  local i _ m
  # ip netns (the cluster's nodes) leaves mounts stacked on run/netns:
  # unmount deepest first, a few times over.
  for _ in 1 2 3; do
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
    { grep -o " ${root}[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    grep -q " $root" /proc/mounts || break
  done
  # Nothing may still be mounted below the chroot before it is removed.
  if ! grep -q " $root" /proc/mounts; then rm -rf "$root"; else echo "kit-check.sh: left $root (still mounted)" >&2; fi
}
trap cleanup EXIT
mount_at() {  # mount_at TARGET MOUNT-ARGS...
  local target=$1
  shift
  mount "$@" "$target"
  mounts+=("$target")
}

echo "kit-check: a minimal Debian $suite chroot (mmdebstrap --variant=minbase)"
mmdebstrap --quiet --variant=minbase --mode=root "$suite" "$root/fs" "$mirror" </dev/null
fs=$root/fs
for lib in libopenblas.so.0 libgloo.so.0 libspdlog.so.1.10 libcrypto.so.3 libfmt.so.9; do
  if find "$fs/usr/lib" "$fs/lib" -name "$lib" 2>/dev/null | grep -q .; then
    echo "kit-check: FAIL: the minimal chroot already has $lib; it proves nothing about the kit" >&2
    exit 1
  fi
done
[[ ! -e $fs/usr/bin/python3 ]] || { echo "kit-check: FAIL: the minimal chroot has python3" >&2; exit 1; }

# ip netns (the kit's cluster) needs / to be a mount point: first, as the
# bind mounts below must be on top of it.
mount_at "$fs" --bind "$fs"
mkdir -p "$fs/opt/machine-libs" "$fs/opt/out"
for lib in "${machine_libs[@]}"; do
  [[ -f $cuda_libs/$lib ]] || { echo "kit-check: no $cuda_libs/$lib to stand in for the GPU machine's" >&2; exit 1; }
  touch "$fs/opt/machine-libs/$lib"
  mount_at "$fs/opt/machine-libs/$lib" --bind -o ro "$(realpath "$cuda_libs/$lib")"
done
tar -C "$fs/opt" -xzf "$kit"
# The daemons need proc, sys and dev.
mount_at "$fs/proc" -t proc proc
mount_at "$fs/sys" --rbind /sys
mount_at "$fs/dev" --rbind /dev

in_chroot() { chroot "$fs" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# Every library resolves to the kit, the three stand-ins, or glibc.
bad=$(in_chroot sh -c 'for b in /opt/ddp-gpu-kit/bin/* /opt/ddp-gpu-kit/cluster/*/*; do
    case $b in *.sh) continue ;; esac
    LD_LIBRARY_PATH=/opt/machine-libs ldd "$b"
  done' |
  awk '$2 == "=>" && ($3 !~ /^\/opt\/(ddp-gpu-kit|machine-libs)\// &&
       $1 !~ /^(libc|libm|libpthread|libdl|librt|libresolv)\.so/) { print }')
if [[ -n $bad ]]; then
  echo "kit-check: FAIL: libraries found outside the kit (or missing):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "kit-check: every library of the kit's programs, Slurm's and its plugins resolves inside the kit (or glibc, or the 3 stand-ins)"
[[ ! -e $fs/usr/sbin/slurmd && ! -e $fs/usr/bin/srun ]] || { echo "kit-check: FAIL: the minimal chroot has Slurm" >&2; exit 1; }

status=0
in_chroot DDP_CUDA_LIBS=/opt/machine-libs OUT=/opt/out /opt/ddp-gpu-kit/run-gpu.sh --device cpu --rows kit,slurm ||
  status=$?
if ((status != 0)); then
  for log in "$fs"/opt/out/kit-logs/*.log "$fs"/opt/out/kit-logs/slurm-daemons/*/*.log; do
    [[ -f $log ]] && { echo "--- ${log##*/}"; tail -5 "$log"; }
  done >&2
  echo "kit-check: FAIL: run-gpu.sh --device cpu --rows kit,slurm in the minimal chroot (status $status)" >&2
  exit 1
fi
echo "kit-check: PASS"
