#!/usr/bin/env bash
# Builds the GPU kit: ddp-train, ddp-agent, ddp-gpu-selftest and
# ddp-gpu-allreduce-bw for A100 and H100/H200 (sm_80, sm_90), with every
# shared library they need that a GPU machine's image may lack, the
# Fashion-MNIST files, the PyTorch DDP peer and run-gpu.sh, in one archive a
# device call can carry and run (tests/gpu/README.md gives the command).
#
# It also carries a Slurm cluster for a GPU machine that has none (cluster/):
# Debian's slurmctld, slurmd, slurmstepd, clients and plugins, our
# spank_ddp.so, ip/ss/nsenter/lstopo, and tests/cluster/cluster.sh, which
# brings the cluster up from them (--slurm DIR); run-gpu.sh's Slurm rows
# (tests/gpu/slurm-rows.sh) use it.
#
# Only glibc, the driver, cuBLAS and NCCL are left to the machine (the image
# has PyTorch's CUDA 13 wheels, whose cuBLAS and NCCL run-gpu.sh finds); the
# CUDA runtime is linked statically. tests/gpu/kit-check.sh proves the archive
# self-contained in a minimal Debian chroot.
#
#   tests/gpu/kit.sh [--build-dir DIR] [--out FILE]
#
# --build-dir: an existing CUDA build to take the programs from (tests/run-all.sh
# passes its build/); default build-kit/, configured here for release.
# --out: default .gpu-kit/ddp-gpu-kit.tar.gz (ignored by git; `carry` it).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$repo/build-kit
out=$repo/.gpu-kit/ddp-gpu-kit.tar.gz
while (($#)); do
  case $1 in
    --build-dir) build=$(realpath -m "${2:?}"); shift 2 ;;
    --out) out=$(realpath -m "${2:?}"); shift 2 ;;
    *) echo "kit.sh: unknown argument $1 (usage: kit.sh [--build-dir DIR] [--out FILE])" >&2; exit 2 ;;
  esac
done
data=/usr/share/datasets/fashion-mnist
limit_mib=64
programs=(agent/ddp-agent trainer/ddp-train trainer/cuda/ddp-gpu-selftest trainer/cuda/ddp-gpu-allreduce-bw)
# The cluster's parts, from Debian's slurmctld, slurmd and slurm-client
# (22.05), iproute2, util-linux and hwloc.
slurm_lib=/usr/lib/x86_64-linux-gnu/slurm-wlm
slurm_daemons=(slurmctld slurmd slurmstepd)
slurm_clients=(srun sbatch salloc scontrol sinfo squeue scancel)
cluster_tools=(ip ss nsenter lstopo-no-graphics)
# What the GPU machine provides: glibc's libraries and loader, the driver
# (libcuda), and cuBLAS and NCCL from PyTorch's wheels. Everything else ldd
# lists goes into the kit.
machine_provides='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libcuda\.so|libcublas\.so\.13|libcublasLt\.so\.13|libnccl\.so\.2)'

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "kit.sh: the GPU kit needs the CUDA toolkit with NCCL in /usr/local/cuda (nvcc not found)" >&2
  exit 1
fi
for tool in patchelf ldd strip tar "${slurm_daemons[@]}" "${slurm_clients[@]}" "${cluster_tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "kit.sh: $tool is missing: run packaging/install-deps.sh test" >&2; exit 1; }
done
[[ -f $data/train-images-idx3-ubyte.gz ]] || { echo "kit.sh: no Fashion-MNIST in $data: run packaging/install-deps.sh test" >&2; exit 1; }

# ---------------------------------------------------------------- build
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDDP_CUDA=ON -DDDP_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
fi
if ! cmake --build "$build" -j"$(nproc)" --target ddp-agent ddp-train ddp-gpu-selftest ddp-gpu-allreduce-bw spank_ddp \
  ddp_nccl_profiler \
  >"$build/kit-build.log" 2>&1; then
  tail -20 "$build/kit-build.log" >&2
  echo "kit.sh: building the kit's programs in $build failed (a build without CUDA has no ddp-gpu-selftest:" \
    "configure it with -DDDP_CUDA=ON); the whole log: $build/kit-build.log" >&2
  exit 1
fi

# ---------------------------------------------------------------- stage
stage=$(mktemp -d /tmp/ddp-gpu-kit-stage.XXXXXX)
trap 'rm -rf "$stage"' EXIT
kit=$stage/ddp-gpu-kit
mkdir -p "$kit/bin" "$kit/lib" "$kit/data/fashion-mnist" "$kit/peer"
for p in "${programs[@]}"; do
  [[ -x $build/$p ]] || { echo "kit.sh: $build/$p was not built" >&2; exit 1; }
  cp "$build/$p" "$kit/bin/"
done
# NCCL's profiler plugin beside the agent, where the agent looks first.
cp "$build/agent/libnccl-profiler-ddp.so" "$kit/bin/"
strip --strip-unneeded "$kit"/bin/*

# The cluster: daemons in sbin/, clients and tools in bin/, libslurmfull and
# the plugins in lib/ (slurm.conf's PluginDir), our plugin beside them.
cluster=$kit/cluster
mkdir -p "$cluster/bin" "$cluster/sbin" "$cluster/lib"
for p in "${slurm_daemons[@]}"; do cp -L "$(command -v "$p")" "$cluster/sbin/"; done
for p in "${slurm_clients[@]}" "${cluster_tools[@]}"; do cp -L "$(command -v "$p")" "$cluster/bin/"; done
cp "$slurm_lib"/*.so "$cluster/lib/"
[[ -f $build/spank/spank_ddp.so ]] || { echo "kit.sh: $build/spank/spank_ddp.so was not built" >&2; exit 1; }
cp "$build/spank/spank_ddp.so" "$cluster/lib/"
cp "$repo/tests/cluster/cluster.sh" "$cluster/"
chmod u+w "$cluster"/*/*
strip --strip-unneeded "$cluster"/*/*

# Every library ldd resolves, under the name the programs ask for (ldd lists
# the whole closure, so the libraries' own dependencies come along). Slurm's
# own libslurmfull is in cluster/lib already.
declare -A bundled=([libslurmfull.so]=$slurm_lib/libslurmfull.so)
for bin in "$kit"/bin/* "$cluster"/*/*; do
  [[ $bin == *.sh ]] && continue
  if ldd "$bin" | grep -q 'not found'; then
    echo "kit.sh: ${bin##*/} needs libraries this machine lacks:" >&2
    ldd "$bin" | grep 'not found' >&2
    exit 1
  fi
  while read -r name path; do
    [[ $name =~ $machine_provides ]] && continue
    [[ -n ${bundled[$name]:-} ]] && continue
    cp -L "$path" "$kit/lib/$name"
    bundled[$name]=$path
  done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
done
chmod u+w "$kit"/lib/*
strip --strip-unneeded "$kit"/lib/*
# The programs look in ../lib, the libraries beside themselves: no
# LD_LIBRARY_PATH is needed for what the kit carries.
for f in "$kit"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$kit"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done
for f in "$cluster"/bin/* "$cluster"/sbin/*; do patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../../lib' "$f"; done
for f in "$cluster"/lib/*; do patchelf --set-rpath '$ORIGIN:$ORIGIN/../../lib' "$f"; done

cp "$data"/*-ubyte.gz "$kit/data/fashion-mnist/"
cp "$repo/bench/pytorch_ddp.py" "$repo/bench/gpt_pytorch.py" "$kit/peer/"
cp "$repo/tests/gpu/run-gpu.sh" "$repo/tests/gpu/slurm-rows.sh" "$kit/"
mkdir -p "$kit/scripts"
cp "$repo"/tests/gpu/scripts/* "$kit/scripts/"
{
  echo "slurm-ddp GPU kit $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown), built $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "programs: ${programs[*]##*/}; CUDA architectures: $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "$("$build/trainer/ddp-train" --version 2>/dev/null | tr '\n' ' ')"
  echo "cluster: Slurm $(slurmd -V | awk '{ print $2 }') ($(dpkg-query -W -f='${Version}' slurmd 2>/dev/null || echo '?')): ${slurm_daemons[*]} ${slurm_clients[*]}, $(find "$cluster/lib" -name '*.so' ! -name 'lib*' ! -name spank_ddp.so | wc -l) plugins, spank_ddp.so; ${cluster_tools[*]}"
  echo "newest glibc symbol version needed: $(find "$kit" -type f \( -perm -u+x -o -name '*.so*' \) -exec objdump -T {} + 2>/dev/null |
    grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)"
  echo "taken from the machine: glibc, libcuda (driver), libcublas.so.13, libcublasLt.so.13, libnccl.so.2"
  echo "bundled in lib/:"
  for name in $(printf '%s\n' "${!bundled[@]}" | sort); do echo "  $name (from ${bundled[$name]})"; done
} >"$kit/MANIFEST"

# ---------------------------------------------------------------- pack
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out.tmp" ddp-gpu-kit
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
if ((size > limit_mib * 1024 * 1024)); then
  echo "kit.sh: $out is $((size / 1024 / 1024)) MiB, over the $limit_mib MiB a device call carries" >&2
  exit 1
fi
echo "kit.sh: $out ($((size / 1024)) KiB; ${#bundled[@]} libraries bundled, see MANIFEST inside)"
