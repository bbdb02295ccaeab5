# Shared by the GPU scripts (sourced, not run): where the build is, and a
# build step that configures it first if needed.
# shellcheck shell=bash
# The variables below are used by the scripts that source this file.
# shellcheck disable=SC2034

gpu_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$gpu_here/../.." && pwd)
build=${BUILD_DIR:-$repo/build-gpu}
# Where results go: $OUT if the caller set it, else a fresh directory.
OUT=${OUT:-$(mktemp -d /tmp/ddp-gpu-test.XXXXXX)}
mkdir -p "$OUT"
data=${DATA:-/usr/share/datasets/fashion-mnist}

selftest=$build/trainer/cuda/ddp-gpu-selftest
allreduce_bw=$build/trainer/cuda/ddp-gpu-allreduce-bw
agent=$build/agent/ddp-agent
trainer=$build/trainer/ddp-train

# build_targets TARGET...: a fresh configure builds kernels for the GPUs of
# this machine (native) and skips the cluster tests, which need files a GPU
# machine may lack.
build_targets() {
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$repo" -B "$build" -DDDP_CUDA=ON -DDDP_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=native
  fi
  cmake --build "$build" -j "$(nproc)" --target "$@"
}

gpu_count() {
  nvidia-smi -L | wc -l
}

# check_final_accuracy METRICS_FILE MIN: the last line is the "final" record
# and its test_accuracy is at least MIN.
check_final_accuracy() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
path, minimum = sys.argv[1], float(sys.argv[2])
lines = [line for line in open(path) if line.strip()]
if not lines:
    sys.exit(f"{path}: no metrics written")
final = json.loads(lines[-1])
if final.get("event") != "final":
    sys.exit(f"{path}: the last line is not the final record: {lines[-1].strip()}")
accuracy = final.get("test_accuracy")
print(f"final test_accuracy {accuracy} (need >= {minimum}), {final.get('samples_per_second')} samples/s")
sys.exit(0 if accuracy is not None and accuracy >= minimum else 1)
PY
}
