#!/usr/bin/env bash
# Runs one fuzz target for ctest (tests/fuzz/CMakeLists.txt):
#   run-fuzz.sh replay ENGINE BINARY SOURCE_DIR NAME           # corpus + regressions, once each
#   run-fuzz.sh fuzz   ENGINE BINARY SOURCE_DIR NAME SECONDS WORKDIR # libFuzzer, bounded time
# ENGINE: libfuzzer (clang, -DDDP_FUZZ=ON) or driver (driver.cpp's main).
# The committed corpus (corpus/NAME) is read, never written: new inputs go to
# WORKDIR/corpus-NAME, crashes to WORKDIR/crash-NAME-*, with the commands to
# reproduce it and keep it as a regression input printed on failure.
set -euo pipefail
mode=$1 engine=$2 binary=$3 src=$4 name=$5
corpus=$src/corpus/$name regressions=$src/regressions/$name
# Leaks inside libraries we do not own, each explained in lsan.supp.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$src/lsan.supp:print_suppressions=0"
# clang's driver links libFuzzer's libstdc++ ahead of the shared ASan runtime
# (-shared-libasan, see CMakeLists.txt); libstdc++ interposes no allocator, so
# the runtime's "must come first" check is a false alarm here.
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
dirs=("$corpus")
[[ -d $regressions ]] && dirs+=("$regressions")
[[ -d $corpus ]] || { echo "run-fuzz: no corpus at $corpus" >&2; exit 1; }

case $mode in
replay)
  if [[ $engine == libfuzzer ]]; then
    # libFuzzer: -runs=0 executes the given inputs and mutates nothing.
    exec "$binary" -runs=0 "${dirs[@]}"
  fi
  exec "$binary" "${dirs[@]}"
  ;;
fuzz)
  [[ $engine == libfuzzer ]] || { echo "run-fuzz: fuzzing needs a libFuzzer build (clang, -DDDP_FUZZ=ON)" >&2; exit 2; }
  seconds=$6 work=$7
  mkdir -p "$work/corpus-$name"
  rc=0
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/crash-$name-" \
    "$work/corpus-$name" "${dirs[@]}" || rc=$?
  if ((rc != 0)); then
    shopt -s nullglob
    for crash in "$work/crash-$name-"*; do
      echo "run-fuzz: $name failed on $crash"
      echo "  reproduce: $binary $crash"
      echo "  once fixed, keep it: mkdir -p $regressions && cp $crash $regressions/"
    done
    exit "$rc"
  fi
  echo "run-fuzz: $name ran ${seconds} s, no crash; $(find "$work/corpus-$name" -type f | wc -l) new inputs in $work/corpus-$name"
  ;;
*)
  echo "run-fuzz: unknown mode '$mode' (replay | fuzz)" >&2
  exit 2
  ;;
esac
