#!/usr/bin/env bash
# The GPU kit's runner (packed by tests/gpu/kit.sh next to bin/, lib/, data/
# and peer/): every GPU check of ddp-train in one call of a few minutes, a
# table last. Nothing is built here; the kit carries its own libraries and
# takes only the driver, cuBLAS and NCCL from the machine (PyTorch's wheels).
#
#   run-gpu.sh                 # on a GPU machine: all checks and benchmarks
#   run-gpu.sh --device cpu    # no GPU: the kit loads and trains on the CPU
#   run-gpu.sh --rows slurm    # srun --ddp on the kit's own Slurm cluster
#                              # (slurm-rows.sh); --rows kit,slurm-1,... picks
#   run-gpu.sh --rows gpt,cnn  # --model gpt and cnn: CUDA against the CPU, and
#                              # their speed against PyTorch
#
# Options: --rows LIST (kit: the checks and benchmarks below, the default;
# gpt, cnn: those models' rows; slurm-1..slurm-6, or slurm for all six:
# tests/gpu/slurm-rows.sh),
# --epochs N (benchmarks, default 4), --python PATH (the peer's
# PyTorch; default: $PYTHON, else python3). Environment: OUT (results; default
# a new /tmp directory), DDP_CUDA_LIBS (a colon list of directories holding
# libcublas.so.13, libcublasLt.so.13 and libnccl.so.2; default: the Python
# wheels of --python, then /usr/local/cuda/lib64). Exit status 0 when every
# check passed; a failed check does not stop the others.
set -uo pipefail
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
device=cuda
epochs=4
python=${PYTHON:-python3}
rows=kit
while (($#)); do
  case $1 in
    --rows) rows=${2:?}; shift 2 ;;
    --device) device=${2:?}; shift 2 ;;
    --epochs) epochs=${2:?}; shift 2 ;;
    --python) python=${2:?}; shift 2 ;;
    *) echo "run-gpu.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ $device == cuda || $device == cpu ]] || { echo "run-gpu.sh: --device cuda or cpu, not $device" >&2; exit 2; }
picked=()
for r in ${rows//,/ }; do
  [[ $r =~ ^(kit|gpt|cnn|slurm|slurm-[1-6])$ ]] || { echo "run-gpu.sh: --rows: '$r' is not kit, gpt, cnn, slurm or slurm-1..slurm-6" >&2; exit 2; }
  if [[ $r == slurm ]]; then picked+=(slurm-1 slurm-2 slurm-3 slurm-4 slurm-5 slurm-6); else picked+=("$r"); fi
done
rows=$(IFS=,; echo "${picked[*]}")
OUT=${OUT:-$(mktemp -d /tmp/ddp-gpu-kit.XXXXXX)}
# The peer runs with the environment's own library path: the kit's
# LD_LIBRARY_PATH (preflight) is for the kit's programs only.
if [[ -n ${LD_LIBRARY_PATH+set} ]]; then
  peer_env=(env "LD_LIBRARY_PATH=$LD_LIBRARY_PATH")
else
  peer_env=(env -u LD_LIBRARY_PATH)
fi
logs=$OUT/kit-logs
mkdir -p "$logs"
data=$kit/data/fashion-mnist
train=$kit/bin/ddp-train
agent=$kit/bin/ddp-agent
table=$OUT/gpu-kit-results.md
failed=0
: >"$table.rows"

# ---------------------------------------------------------------- reporting
row() {  # row CHECK RESULT FIGURES
  printf '| %s | %s | %s |\n' "$1" "$2" "$3" >>"$table.rows"
  printf 'run-gpu: %-44s %-5s %s\n' "$1" "$2" "$3"
  [[ $2 != FAIL ]] || failed=1
}

# run NAME SECONDS CMD...: runs CMD with a time limit, output to $logs/NAME.log;
# its status in $rc, its seconds in $took. Every limit is cut to what is left
# of the whole run's budget (KIT_BUDGET seconds, default 540: one device call
# of 10 minutes, with room for the start), so one hang cannot eat the rest.
budget=${KIT_BUDGET:-540}
run() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS))
  if ((left < 15)); then
    echo "run-gpu: $name skipped: the kit's budget of ${budget}s is spent" >"$logs/$name.log"
    rc=124 took=0 hung=1
    return
  fi
  ((limit > left)) && limit=$left
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  # 124/137 are also ddp-agent's own codes (a worker killed by SIGKILL exits
  # 137, as in a shell): only the clock tells that timeout cut it off.
  hung=0
  if ((rc == 124 || rc == 137)) && ((took >= limit)); then
    hung=1
    echo "run-gpu: $name ran past ${limit}s (a hang?)" >>"$logs/$name.log"
  fi
}

# The value of KEY in the last "final" record of a metrics file or output.
final_value() {
  grep '"event": *"final"' "$1" | tail -1 | sed -n "s/.*\"$2\": *\([-0-9.e+]*\).*/\1/p"
}

# The median samples/s of the epochs after the first (steady state), from a
# ddp-train metrics file (epoch records) or a peer output (its list).
steady_rate() {
  local file=$1
  if grep -q '"epoch_samples_per_second"' "$file"; then
    grep '"event": *"final"' "$file" | tail -1 | sed -n 's/.*"epoch_samples_per_second": *\[\([^]]*\)\].*/\1/p' |
      tr ',' '\n'
  else
    grep '"event":"epoch"' "$file" | sed -n 's/.*"samples_per_second":\([-0-9.e+]*\).*/\1/p'
  fi | awk 'NR > 1 { v[n++] = $1 } END { if (!n) exit 1; asort_n(v, n); print (n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2) }
            function asort_n(a, n,   i, j, t) { for (i = 1; i < n; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }'
}

# Largest absolute difference of two raw float32 files (ddp-train --dump-params).
max_abs_diff() {
  paste <(od -An -v -w4 -t f4 "$1") <(od -An -v -w4 -t f4 "$2") |
    awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; n++ } END { if (!n) exit 1; printf "%.3g\n", m }'
}

at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a >= b) }'; }

# accuracy_row CHECK METRICS_FILE RUN_NAME: the run just made (its $rc) ended
# well and its final test accuracy is at least 0.8 (one epoch of the MLP).
accuracy_row() {
  local acc rate
  acc=$(final_value "$2" test_accuracy 2>/dev/null)
  rate=$(final_value "$2" samples_per_second 2>/dev/null)
  if ((rc == 0)) && at_least "$acc" 0.8; then
    row "$1" PASS "test accuracy $acc, ${rate%.*} samples/s"
  else
    row "$1" FAIL "rc $rc, accuracy '${acc}', see $logs/$3.log"
  fi
}

# ---------------------------------------------------------------- libraries
# cuBLAS and NCCL come from the machine: PyTorch's CUDA 13 wheels put them in
# site-packages/nvidia/cu13/lib and nvidia/nccl/lib (CUDA 12 wheels: one
# directory per library). The driver (libcuda) is found as the system finds it.
cuda_lib_dirs() {
  if [[ -n ${DDP_CUDA_LIBS:-} ]]; then
    echo "$DDP_CUDA_LIBS"
    return
  fi
  local dirs=() sp sub
  if command -v "$python" >/dev/null 2>&1; then
    while read -r sp; do
      for sub in nvidia/cu13/lib nvidia/nccl/lib nvidia/cublas/lib nvidia/cuda_runtime/lib; do
        [[ -d $sp/$sub ]] && dirs+=("$sp/$sub")
      done
    done < <("$python" -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)
  fi
  [[ -d /usr/local/cuda/lib64 ]] && dirs+=(/usr/local/cuda/lib64)
  local IFS=:
  echo "${dirs[*]}"
}

preflight() {
  local dirs
  dirs=$(cuda_lib_dirs)
  export LD_LIBRARY_PATH=$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local missing="" bin
  for bin in "$kit"/bin/*; do
    missing+=$(ldd "$bin" 2>&1 | awk -v b="${bin##*/}" '/not found|version .* not found/ { printf "%s: %s; ", b, $0 }')
  done
  if [[ -n $missing ]]; then
    row "kit loads (ldd)" FAIL "${missing}looked for cuBLAS/NCCL in: ${dirs:-nowhere}; set DDP_CUDA_LIBS"
    return 1
  fi
  local versions
  versions=$("$train" --version 2>&1 | tr '\n' ' ')
  row "kit loads (ldd, --version)" PASS "${versions}; cuBLAS/NCCL from ${dirs:-the system}"
}

# ---------------------------------------------------------------- CPU checks
# ddp-train ARGS... under ddp-agent with N workers: train N NAME SECONDS ARGS...
train() {
  local n=$1 name=$2 limit=$3
  shift 3
  run "$name" "$limit" "$agent" --nproc "$n" -- "$train" --data "$data" "$@"
}

check_cpu() {
  run no-gpu-selftest 60 "$kit/bin/ddp-gpu-selftest"
  if ((rc != 0)) && grep -q "no CUDA device\|driver" "$logs/no-gpu-selftest.log"; then
    row "no GPU: ddp-gpu-selftest says so" PASS "$(head -c 160 "$logs/no-gpu-selftest.log" | tr '\n' ' ')"
  else
    row "no GPU: ddp-gpu-selftest says so" FAIL "rc $rc, see $logs/no-gpu-selftest.log"
  fi
  train 1 no-gpu-train 60 --device cuda --epochs 1
  if ((rc != 0)) && grep -q "no CUDA device" "$logs/no-gpu-train.log"; then
    row "no GPU: ddp-train --device cuda says so" PASS "rc $rc in ${took}s"
  else
    row "no GPU: ddp-train --device cuda says so" FAIL "rc $rc, see $logs/no-gpu-train.log"
  fi
  train 1 cpu-1rank 300 --device cpu --model mlp --epochs 1 --batch-size 128 --metrics "$OUT/cpu-1.jsonl"
  accuracy_row "CPU: 1 epoch, 1 rank" "$OUT/cpu-1.jsonl" cpu-1rank
  parity cpu 1e-5
  check_stall cpu
}

# A rank that stalls without dying (asleep at step 50, the other waits in the
# all-reduce): the agent's hang watch (5 s) names it, long before the
# collective's own timeout.
check_stall() {  # check_stall cuda|cpu
  local dev=$1
  local label="2 ranks ($dev): rank 1 stalls at step 50 (--hang-timeout 5)"
  local args=(--device "$dev" --model mlp --epochs 2 --stall-at-step 50 --comm-timeout 100)
  if [[ $dev == cuda ]]; then
    SDDP_HANG_TIMEOUT=5 two_ranks_one_gpu stall 120 "${args[@]}"
  else
    SDDP_HANG_TIMEOUT=5 run stall 120 "$agent" --nproc 2 -- "$train" --data "$data" "${args[@]}"
  fi
  if ((rc != 0 && !hung)) && grep -q "fault injection: rank 1 stops making progress" "$logs/stall.log" &&
    grep -q "root cause: worker rank 1 .*hung: no progress" "$logs/stall.log"; then
    row "$label" PASS "named as the hang, stopped in ${took}s, rc $rc"
  else
    row "$label" FAIL "rc $rc after ${took}s, see $logs/stall.log"
  fi
}

# ---------------------------------------------------------------- GPU checks
check_selftest() {
  run selftest 300 "$kit/bin/ddp-gpu-selftest"
  local passes fails
  passes=$(grep -c '^PASS' "$logs/selftest.log")
  fails=$(grep -c '^FAIL' "$logs/selftest.log")
  if ((rc == 0 && fails == 0 && passes > 0)); then
    row "op parity CUDA vs CPU, 1-rank NCCL" PASS "$passes checks passed"
  else
    row "op parity CUDA vs CPU, 1-rank NCCL" FAIL "rc $rc, $fails failed: $( (grep '^FAIL' "$logs/selftest.log" || cat "$logs/selftest.log") | head -3 | tr '\n' ' ' | cut -c1-300)"
  fi
}

check_one_gpu() {
  train 1 gpu-1rank 300 --device cuda --model mlp --epochs 1 --batch-size 128 --metrics "$OUT/gpu-1.jsonl"
  accuracy_row "1 GPU: 1 epoch" "$OUT/gpu-1.jsonl" gpu-1rank
}

# Two ranks on the one GPU: NCCL accepts them only as two hosts (NCCL_HOSTID
# per rank); they then talk over its socket transport, on loopback.
two_ranks_one_gpu() {  # two_ranks_one_gpu NAME SECONDS ARGS... (ddp-train's)
  local name=$1 limit=$2
  shift 2
  NCCL_SOCKET_IFNAME=lo run "$name" "$limit" "$agent" --nproc 2 -- \
    sh -c 'NCCL_HOSTID=ddp-kit-$LOCAL_RANK exec "$0" "$@"' "$train" --data "$data" "$@"
}

check_two_ranks() {
  # Without distinct NCCL_HOSTIDs ddp-train refuses at once, naming the fix.
  run dup-gpu 120 "$agent" --nproc 2 -- "$train" --data "$data" --device cuda --epochs 1
  if ((rc != 0)) && grep -q "both use the GPU at PCI" "$logs/dup-gpu.log"; then
    row "2 ranks, 1 GPU, same host: refused first" PASS "in ${took}s: our message, not NCCL's"
  else
    row "2 ranks, 1 GPU, same host: refused first" FAIL "rc $rc in ${took}s, see $logs/dup-gpu.log"
  fi
  two_ranks_one_gpu gpu-2rank 400 --device cuda --model mlp --epochs 1 --batch-size 128 --metrics "$OUT/gpu-2.jsonl"
  accuracy_row "2 ranks on 1 GPU (NCCL_HOSTID): 1 epoch" "$OUT/gpu-2.jsonl" gpu-2rank
  parity cuda 1e-4
  # A rank killed mid-run: the other is stopped (agent or NCCL watchdog), never hangs.
  two_ranks_one_gpu crash 120 --device cuda --model mlp --epochs 2 --crash-at-step 50 --comm-timeout 30
  # Rank 1 must really have died at step 50 (its own last words), and the run
  # must have ended on its own with a failure, not at the time limit.
  if ((rc != 0 && !hung)) && grep -q "fault injection: rank 1 kills itself" "$logs/crash.log"; then
    row "2 ranks on 1 GPU: rank 1 killed at step 50" PASS "stopped in ${took}s, rc $rc"
  else
    row "2 ranks on 1 GPU: rank 1 killed at step 50" FAIL "rc $rc after ${took}s, see $logs/crash.log"
  fi
  check_stall cuda
}

# The same global batch on 1 and 2 ranks gives the same parameters.
parity() {  # parity DEVICE TOLERANCE
  local dev=$1 tol=$2 ranks
  local args=(--device "$dev" --model mlp --epochs 1 --batch-size 128 --limit-train 1280 --limit-test 1000)
  train 1 "parity-$dev-1" 300 "${args[@]}" --dump-params "$OUT/params-$dev-1.bin"
  local rc1=$rc
  if [[ $dev == cuda ]]; then
    two_ranks_one_gpu "parity-$dev-2" 300 "${args[@]}" --dump-params "$OUT/params-$dev-2.bin"
  else
    train 2 "parity-$dev-2" 300 "${args[@]}" --dump-params "$OUT/params-$dev-2.bin"
  fi
  ranks="1 vs 2 ranks, $dev"
  local diff
  diff=$(max_abs_diff "$OUT/params-$dev-1.bin" "$OUT/params-$dev-2.bin" 2>/dev/null)
  if ((rc1 == 0 && rc == 0)) && [[ -n $diff ]] && awk -v d="$diff" -v t="$tol" 'BEGIN { exit !(d <= t) }'; then
    row "parameter parity, $ranks" PASS "max abs difference $diff (<= $tol) after 10 steps"
  else
    row "parameter parity, $ranks" FAIL "rc $rc1/$rc, difference '${diff}', see $logs/parity-$dev-*.log"
  fi
}

check_bandwidth() {
  run bw-1proc 300 "$kit/bin/ddp-gpu-allreduce-bw" 20
  cp "$logs/bw-1proc.log" "$OUT/allreduce-1gpu.txt"
  local big
  big=$(awk '$1 ~ /^[0-9]/ { last = $0 } END { print last }' "$logs/bw-1proc.log")
  if ((rc == 0)); then row "NCCL all-reduce, 1 rank" PASS "largest size: $big"; else row "NCCL all-reduce, 1 rank" FAIL "rc $rc, see $logs/bw-1proc.log"; fi
  NCCL_SOCKET_IFNAME=lo run bw-2proc 400 "$agent" --nproc 2 -- sh -c \
    'NCCL_HOSTID=ddp-kit-$LOCAL_RANK exec "$0" --rank "$RANK" --nranks "$WORLD_SIZE" --id-file "/tmp/ddp-kit-bw.$MASTER_PORT.id" --iterations 10' \
    "$kit/bin/ddp-gpu-allreduce-bw"
  cp "$logs/bw-2proc.log" "$OUT/allreduce-2ranks-1gpu.txt"
  big=$(awk '/^\[rank 0\]/ { sub(/^\[rank 0\] */, "") } $1 ~ /^[0-9]/ { last = $0 } END { print last }' "$logs/bw-2proc.log")
  if ((rc == 0)); then row "NCCL all-reduce, 2 ranks on 1 GPU (sockets)" PASS "largest size: $big"; else row "NCCL all-reduce, 2 ranks on 1 GPU (sockets)" FAIL "rc $rc, see $logs/bw-2proc.log"; fi
}

# ---------------------------------------------------------------- benchmarks
# ddp-train (eager, CUDA graph, non-blocking NCCL calls) against PyTorch DDP on
# this GPU: same model, global batch 128, optimizer, sampler and epochs.
# Steady state = the median samples/s of epochs 2..N. Like against like: our
# eager rows against PyTorch eager, our CUDA graph against PyTorch's
# (torch.compile mode="reduce-overhead", one rank: the graph-captured step).
torch_peer() {  # torch_peer NAME LABEL RANKS ARGS...: sets torch_rate ("" on failure)
  local name=$1 label=$2 ranks=$3
  shift 3
  torch_rate=""
  if ((ranks == 1)); then
    run "$name" 240 "$agent" --nproc 1 -- "${peer_env[@]}" "$python" "$kit/peer/pytorch_ddp.py" "$@"
  else
    NCCL_SOCKET_IFNAME=lo run "$name" 240 "$agent" --nproc 2 -- "${peer_env[@]}" "$python" \
      "$kit/peer/pytorch_ddp.py" "$@" --distinct-hostid
  fi
  if ((rc == 0)); then
    torch_rate=$(steady_rate "$logs/$name.log")
    row "$label" PASS "steady $(printf %.0f "$torch_rate") samples/s; $metric $(final_value "$logs/$name.log" "$metric")"
  else
    row "$label" FAIL "rc $rc, see $logs/$name.log"
  fi
}

bench() {  # bench MODEL RANKS
  local model=$1 ranks=$2 metric=test_accuracy variant
  [[ $model == ae ]] && metric=test_mse
  local args=(--device cuda --model "$model" --epochs "$epochs" --batch-size 128)
  local torch_rate="" eager_rate graph_rate=""
  local peer=(--model "$model" --data "$data" --epochs "$epochs" --batch-size 128 --device cuda)
  torch_peer "torch-$model-$ranks" "PyTorch DDP $model, $ranks rank(s), eager" "$ranks" "${peer[@]}"
  eager_rate=$torch_rate
  if ((ranks == 1)) && [[ $model != cnn ]]; then
    torch_peer "torch-$model-$ranks-graph" "PyTorch DDP $model, 1 rank, CUDA graphs (torch.compile reduce-overhead)" 1 \
      "${peer[@]}" --compile --compile-mode reduce-overhead
    graph_rate=$torch_rate
  fi
  local name
  for variant in eager graph nonblocking; do
    torch_rate=$eager_rate
    [[ $variant == graph ]] && torch_rate=$graph_rate
    local extra=()
    [[ $variant == graph ]] && extra=(--cuda-graph)
    [[ $variant == nonblocking ]] && extra=(--nccl-ops nonblocking)
    name="ddp-train-$model-$ranks-$variant"
    if ((ranks == 1)); then
      train 1 "$name" 180 "${args[@]}" "${extra[@]}" --metrics "$OUT/$name.jsonl"
    else
      two_ranks_one_gpu "$name" 240 "${args[@]}" "${extra[@]}" --metrics "$OUT/$name.jsonl"
    fi
    if ((rc == 0)); then
      local rate ratio=""
      rate=$(steady_rate "$OUT/$name.jsonl")
      local against="PyTorch eager"
      [[ $variant == graph ]] && against="PyTorch CUDA graphs"
      [[ -n $torch_rate ]] && ratio=$(awk -v a="$rate" -v b="$torch_rate" -v p="$against" 'BEGIN { printf ", %.2fx %s", a / b, p }')
      row "ddp-train $model, $ranks rank(s), $variant" PASS "steady $(printf %.0f "$rate") samples/s$ratio; $metric $(final_value "$OUT/$name.jsonl" "$metric")"
    else
      row "ddp-train $model, $ranks rank(s), $variant" FAIL "rc $rc, see $logs/$name.log"
    fi
  done
}

# ---------------------------------------------------------------- the GPT
# --model gpt on the GPU in fp32 against the CPU: the same random tokens and
# initial parameters (--seed), each step's loss within 1e-3; in bf16 (the
# linear layers' products: --precision bf16, the GPU's default) against
# fp32 on the GPU, within 5e-2; then its tokens/s at GPT-2's size, bf16 and
# fp32, against PyTorch set up as nanoGPT (peer/gpt_pytorch.py: bf16, SDPA,
# fused AdamW, TF32), eager and compiled, with MFU against 989 TFLOP/s
# (dense bf16, H100 SXM and H200). Its kernels have
# not yet passed the op parity row on a GPU: DDP_TRAIN_UNCHECKED_KERNELS=1
# lets these runs try them in the same call.
step_losses() { sed -n 's/.*"event":"step".*"train_loss":\([-0-9.e+]*\).*/\1/p' "$1" | paste -sd' '; }
last_rate() { sed -n 's/.*"tokens_per_second":\([-0-9.e+]*\).*/\1/p' "$1" | tail -1; }

check_gpt() {
  local args=(--model gpt --data random --steps 10 --batch-size 8 --log-every 1 --seed 3)
  run gpt-cpu 300 "$agent" --nproc 1 -- "$train" "${args[@]}" --device cpu --metrics "$OUT/gpt-cpu.jsonl"
  local rc_cpu=$rc
  run gpt-cuda 300 env DDP_TRAIN_UNCHECKED_KERNELS=1 "$agent" --nproc 1 -- "$train" "${args[@]}" --device cuda \
    --precision fp32 --metrics "$OUT/gpt-cuda.jsonl"
  local cpu cuda worst
  cpu=$(step_losses "$OUT/gpt-cpu.jsonl" 2>/dev/null) cuda=$(step_losses "$OUT/gpt-cuda.jsonl" 2>/dev/null)
  worst=$(awk -v a="$cpu" -v b="$cuda" 'BEGIN { n = split(a, x, " "); m = split(b, y, " "); if (n != 10 || m != 10) exit 1
    for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > w) w = d }; print w + 0 }')
  if ((rc_cpu == 0 && rc == 0)) && [[ -n $worst ]] && awk -v w="$worst" 'BEGIN { exit !(w <= 1e-3) }'; then
    row "gpt small, fp32: CUDA = CPU, 10 steps" PASS "each step's loss within $worst (<= 1e-3): $cuda"
  else
    row "gpt small, fp32: CUDA = CPU, 10 steps" FAIL "rc $rc_cpu/$rc, cpu '$cpu', cuda '$cuda', see $logs/gpt-cu*.log"
  fi
  local rc_fp32=$rc bf16
  run gpt-bf16 300 env DDP_TRAIN_UNCHECKED_KERNELS=1 "$agent" --nproc 1 -- "$train" "${args[@]}" --device cuda \
    --precision bf16 --metrics "$OUT/gpt-bf16.jsonl"
  bf16=$(step_losses "$OUT/gpt-bf16.jsonl" 2>/dev/null)
  worst=$(awk -v a="$cuda" -v b="$bf16" 'BEGIN { n = split(a, x, " "); m = split(b, y, " "); if (n != 10 || m != 10) exit 1
    for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > w) w = d }; print w + 0 }')
  if ((rc_fp32 == 0 && rc == 0)) && [[ -n $worst ]] && awk -v w="$worst" 'BEGIN { exit !(w <= 5e-2) }'; then
    row "gpt small, bf16 products against fp32, 10 steps" PASS "each step's loss within $worst (<= 5e-2): $bf16"
  else
    row "gpt small, bf16 products against fp32, 10 steps" FAIL "rc $rc_fp32/$rc, fp32 '$cuda', bf16 '$bf16', see $logs/gpt-bf16.log"
  fi
  # GPT-2 124M, context 1024, 8 sequences a step: 6N + 12LHQT = 855 MFLOP a token (N = 123.65M).
  local ours="" name precision rate
  for precision in fp32 bf16; do
    run "gpt2-ours-$precision" 240 env DDP_TRAIN_UNCHECKED_KERNELS=1 "$agent" --nproc 1 -- "$train" --model gpt \
      --gpt-preset gpt2-124m --data random --steps 12 --batch-size 8 --log-every 6 --device cuda \
      --precision "$precision" --metrics "$OUT/gpt2-$precision.jsonl"
    if ((rc == 0)) && rate=$(last_rate "$OUT/gpt2-$precision.jsonl") && [[ -n $rate ]]; then
      row "ddp-train gpt2-124m, $precision products, 1 GPU" PASS "$(printf %.0f "$rate") tokens/s (steps 7-12), MFU $(awk -v r="$rate" 'BEGIN { printf "%.1f%%", r * 855.0e6 / 989e12 * 100 }')"
      [[ $precision == bf16 ]] && ours=$rate
    else
      row "ddp-train gpt2-124m, $precision products, 1 GPU" FAIL "rc $rc, see $logs/gpt2-ours-$precision.log"
    fi
  done
  for name in eager compile; do
    local extra=()
    [[ $name == compile ]] && extra=(--compile)
    run "gpt2-torch-$name" 240 "${peer_env[@]}" "$python" "$kit/peer/gpt_pytorch.py" --batch-size 8 --steps 20 "${extra[@]}"
    local theirs
    theirs=$(sed -n 's/.*"tokens_per_second": *\([-0-9.e+]*\).*/\1/p' "$logs/gpt2-torch-$name.log" | tail -1)
    if ((rc == 0)) && [[ -n $theirs ]]; then
      row "PyTorch gpt2-124m, bf16, $name" PASS "$(printf %.0f "$theirs") tokens/s, MFU $(sed -n 's/.*"mfu": *\([-0-9.e+]*\).*/\1/p' "$logs/gpt2-torch-$name.log" | awk '{ printf "%.1f%%", $1 * 100 }')${ours:+, ours $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2fx", a / b }')}"
    else
      row "PyTorch gpt2-124m, bf16, $name" FAIL "rc $rc, see $logs/gpt2-torch-$name.log"
    fi
  done
}

# ---------------------------------------------------------------- the CNN
# --model cnn (PyTorch's MNIST example's Net) on the GPU: the same 10 steps
# without dropout on the CPU and the GPU end within 1e-4; then 2 epochs at
# global batch 128 against PyTorch (cuDNN), with the test accuracy. Its
# kernels, too, run here before the op parity row has passed on a GPU.
check_cnn() {
  local args=(--model cnn --epochs 1 --batch-size 128 --limit-train 1280 --limit-test 1000 --no-dropout)
  train 1 cnn-cpu 300 "${args[@]}" --device cpu --dump-params "$OUT/cnn-cpu.bin"
  local rc_cpu=$rc diff
  run cnn-cuda 300 env DDP_TRAIN_UNCHECKED_KERNELS=1 "$agent" --nproc 1 -- "$train" --data "$data" "${args[@]}" \
    --device cuda --dump-params "$OUT/cnn-cuda.bin"
  diff=$(max_abs_diff "$OUT/cnn-cpu.bin" "$OUT/cnn-cuda.bin" 2>/dev/null)
  if ((rc_cpu == 0 && rc == 0)) && [[ -n $diff ]] && awk -v d="$diff" 'BEGIN { exit !(d <= 1e-4) }'; then
    row "cnn: CUDA = CPU, 10 steps, no dropout" PASS "max abs difference $diff (<= 1e-4)"
  else
    row "cnn: CUDA = CPU, 10 steps, no dropout" FAIL "rc $rc_cpu/$rc, difference '${diff}', see $logs/cnn-cu*.log"
  fi
  run torch-cnn 300 "$agent" --nproc 1 -- "${peer_env[@]}" "$python" "$kit/peer/pytorch_ddp.py" --model cnn \
    --data "$data" --epochs 2 --batch-size 128 --device cuda
  local theirs="" ours
  if ((rc == 0)); then
    theirs=$(steady_rate "$logs/torch-cnn.log")
    row "PyTorch cnn, 1 GPU (cuDNN)" PASS "steady $(printf %.0f "$theirs") samples/s; test_accuracy $(final_value "$logs/torch-cnn.log" test_accuracy)"
  else
    row "PyTorch cnn, 1 GPU (cuDNN)" FAIL "rc $rc, see $logs/torch-cnn.log"
  fi
  run ddp-train-cnn 300 env DDP_TRAIN_UNCHECKED_KERNELS=1 "$agent" --nproc 1 -- "$train" --data "$data" --model cnn \
    --epochs 2 --batch-size 128 --device cuda --metrics "$OUT/cnn.jsonl"
  if ((rc == 0)) && ours=$(steady_rate "$OUT/cnn.jsonl"); then
    row "ddp-train cnn, 1 GPU" PASS "steady $(printf %.0f "$ours") samples/s${theirs:+, $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2fx PyTorch", a / b }')}; test_accuracy $(final_value "$OUT/cnn.jsonl" test_accuracy)"
  else
    row "ddp-train cnn, 1 GPU" FAIL "rc $rc, see $logs/ddp-train-cnn.log"
  fi
}

# ---------------------------------------------------------------- main
echo "run-gpu: $device checks, results in $OUT ($(date -u +%FT%TZ))"
if [[ $device == cuda ]]; then
  nvidia-smi -L 2>&1 | head -4 | sed 's/^/run-gpu: /'
fi
# shellcheck source=tests/gpu/slurm-rows.sh
source "$kit/slurm-rows.sh"
slurm_wanted=$(tr ',' '\n' <<<"$rows" | grep '^slurm-' | paste -sd,)
if preflight && [[ ,$rows, == *,kit,* ]]; then
  if [[ $device == cpu ]]; then
    check_cpu
  else
    check_selftest
    check_one_gpu
    check_two_ranks
    check_bandwidth
    for model in mlp ae; do
      bench "$model" 1
      bench "$model" 2
    done
  fi
fi
if [[ ,$rows, == *,gpt,* && $device == cuda ]]; then check_gpt; fi
if [[ ,$rows, == *,cnn,* && $device == cuda ]]; then check_cnn; fi
[[ -z $slurm_wanted ]] || slurm_rows "$slurm_wanted"

{
  echo "# GPU kit results ($device), $(date -u +%FT%TZ)"
  echo
  echo "Kit: $(head -1 "$kit/MANIFEST" 2>/dev/null). Device: $( (nvidia-smi -L 2>/dev/null || echo none) | head -1)."
  echo
  echo "| check | result | figures |"
  echo "|---|---|---|"
  cat "$table.rows"
} >"$table"
rm -f "$table.rows"
echo
cat "$table"
echo
echo "run-gpu: logs in $logs"
exit "$failed"
