#!/usr/bin/env bash
# The sanitizer build: every part (spank_ddp.so, ddp-agent, ddp-train, the
# tests) built by clang with AddressSanitizer + UndefinedBehaviorSanitizer, and
# the fuzz targets with libFuzzer. Runs, in that build:
#   1. the unit tests and the replay of every committed fuzz input;
#   2. each fuzz target for DDP_FUZZ_SECONDS (default 30);
#   3. the cluster and integration tests: Slurm's own processes (srun, sbatch,
#      slurmd, slurmstepd) are not sanitized, so the ASan runtime is preloaded
#      into them to host the sanitized plugin; the agent and trainer are
#      sanitized binaries.
# Any sanitizer report ends the process that made it and is written to a
# report file; the run is clean only when every test passes AND no report file
# exists (a report in a process whose failure a test expects still counts).
#
#   tests/sanitize.sh                       # all three
#   tests/sanitize.sh unit|fuzz|cluster     # one step (the build is always refreshed)
#   DDP_SANITIZE_ONLY=REGEX tests/sanitize.sh unit cluster   # only the tests whose names match
set -euo pipefail
cd "$(dirname "$0")/.."
(($# > 0)) || set -- unit fuzz cluster
build=${DDP_SANITIZE_BUILD:-build-san}

# clang 19, not Debian 12's default clang 14: the ASan runtime is preloaded
# into slurmstepd, which forks each task while its other threads run, and
# LLVM 14's runtime does not hold its allocator's locks across fork(): the
# child could inherit one held by another thread and hang in its first free()
# (exec_task -> slurm_xfree: a plain `srun -N2 hostname` stuck until the
# test's timeout). LLVM 19's runtime takes them around fork().
llvm=${DDP_SANITIZE_LLVM:-19}
packaging/install-deps.sh test >/dev/null
if [[ -f $build/CMakeCache.txt ]] && ! grep -q "^CMAKE_CXX_COMPILER:.*=$(command -v "clang++-$llvm")\$" "$build/CMakeCache.txt"; then
  rm -rf "$build" # configured by another compiler: CMake would not switch in place
fi
CC=clang-$llvm CXX=clang++-$llvm cmake -S . -B "$build" -DDDP_SANITIZE=ON -DDDP_FUZZ=ON -DDDP_CUDA=OFF -DDDP_BUILD_BENCH=OFF -DDDP_WERROR=ON \
  -DDDP_TEST_INSTALLED=OFF -DDDP_TEST_CLUSTER=sn -DDDP_FUZZ_SECONDS="${DDP_FUZZ_SECONDS:-30}" >/dev/null
cmake --build "$build" -j"$(nproc)"

reports=$(mktemp -d /tmp/ddp-sanitizer-reports.XXXXXX)
# Jobs of other users (integration.privilege runs some as nobody) write here too.
chmod 1777 "$reports"
runtime=$("clang++-$llvm" -print-file-name=libclang_rt.asan-x86_64.so)
symbolizer=$(command -v "llvm-symbolizer-$llvm" || true)
common="log_path=$reports/report:external_symbolizer_path=$symbolizer"
export UBSAN_OPTIONS="$common:print_stacktrace=1:halt_on_error=1"
# Leaks inside libraries we do not own, each explained in lsan.supp.
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"

only=()
[[ -z ${DDP_SANITIZE_ONLY:-} ]] || only=(-R "$DDP_SANITIZE_ONLY")
status=0
for step in "$@"; do
  case $step in
  unit)
    ASAN_OPTIONS="$common:detect_leaks=1:strict_string_checks=1:check_initialization_order=1" \
      ctest --test-dir "$build" --output-on-failure -L unit -j"$(nproc)" "${only[@]}" || status=1
    ;;
  fuzz)
    ASAN_OPTIONS="$common:detect_leaks=1" ctest --test-dir "$build" --output-on-failure -L fuzz -j"$(nproc)" || status=1
    ;;
  cluster)
    # The ASan runtime goes into Slurm's processes only, the ones that load
    # spank_ddp.so: the daemons get it preloaded (cluster.sh reads
    # DDP_TEST_PRELOAD); srun, sbatch and salloc are copies, first in PATH,
    # that name it as their first library. Not LD_PRELOAD for those: srun
    # passes its environment to the job, and its own LD_PRELOAD would even
    # win over the user's --export=LD_PRELOAD=... (integration.privilege).
    wrappers=$reports/bin
    mkdir -p "$wrappers"
    for tool in srun sbatch salloc; do
      cp "$(command -v "$tool")" "$wrappers/$tool"
      patchelf --add-needed "$runtime" "$wrappers/$tool"
      chmod 755 "$wrappers/$tool"
    done
    # Leak checking is off: Slurm's daemons keep their memory until exit by
    # design; our own leaks are the unit step's job.
    # verify_asan_link_order=0: the runtime is preloaded, not first in DT_NEEDED.
    PATH=$wrappers:$PATH DDP_TEST_PRELOAD=$runtime ASAN_OPTIONS="$common:detect_leaks=0:verify_asan_link_order=0" \
      ctest --test-dir "$build" --output-on-failure -LE "unit|lint|fuzz|unsanitized" "${only[@]}" || status=1
    ;;
  *)
    echo "sanitize: unknown step '$step' (unit | fuzz | cluster)" >&2
    exit 2
    ;;
  esac
done

shopt -s nullglob
found=("$reports"/report.*)
if ((${#found[@]} > 0)); then
  echo "sanitize: ${#found[@]} sanitizer report(s):" >&2
  for f in "${found[@]}"; do
    echo "==== $f" >&2
    head -60 "$f" >&2
  done
  status=1
fi
if ((status == 0)); then
  echo "sanitize: $*: clean (every test passed, no sanitizer report)"
  rm -rf "$reports"
fi
exit "$status"
