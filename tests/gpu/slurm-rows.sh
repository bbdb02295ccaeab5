# shellcheck shell=bash
# Variables and helpers from run-gpu.sh, which sources this file:
# shellcheck disable=SC2154
# run-gpu.sh's Slurm rows (sourced by it; uses its row, run, accuracy_row,
# $kit, $logs, $OUT, $device, $python, $data, $agent, $train): the mission's
# sentence on a GPU machine, `srun --ddp` through spank_ddp.so on a real Slurm
# cluster that the kit carries (kit/cluster/, brought up by cluster.sh --slurm).
#
#   slurm-1  srun -N1 --gpus-per-node=1 --ddp python probe.py: the GPU Slurm
#            granted, its bus id, the CPUs hwloc puts next to it and the
#            worker's affinity (the topology XML is saved in $OUT)
#   slurm-2  the site's Env= lines of ddp.conf (global, partition, node) as
#            NCCL itself reports them (NCCL_DEBUG=INFO, "set by environment")
#   slurm-3  two nodes (network namespaces) in one step, each node's worker on
#            the one GPU (NCCL_HOSTID per node): one NCCL all-reduce
#   slurm-4  PyTorch Lightning and Accelerate scripts, unmodified: CPU (Gloo),
#            then GPU (NCCL)
#   slurm-5  ddp-train under srun --ddp: 1 epoch (accuracy), a killed rank (root
#            cause), a stalled rank (--ddp-hang-timeout), --ddp-restarts resuming
#   slurm-6  a GPU straggler named with no change to the script: two nodes, the
#            second node's rank does 4x the others' matrix products; node 0
#            names it from our NCCL profiler plugin's figures (GPU only)
#
# On a machine without network namespaces or veth (some VMs), the cluster has
# one node in the host's network, and slurm-3 says so. With --device cpu the
# rows run their CPU halves (Gloo), as the kit check does in a bare chroot.

slurm_cluster=$kit/cluster/cluster.sh
slurm_name=kitgpu
slurm_nodes=2
slurm_net="two network namespaces on a bridge"
# Where the plugin's files live: root-owned and not group-writable all the way
# up, as spank_ddp.so insists for ddp.conf and the agent ($OUT may not be).
slurm_work=$kit/work

# Network namespaces, veth and a bridge, tried once with throwaway names.
slurm_probe_network() {
  local ok=0
  if ip netns add sddp-kitprobe 2>/dev/null; then
    if ip link add sddpkitprobe type veth peer name eth0 netns sddp-kitprobe 2>/dev/null &&
      ip link add sddpkitbr type bridge 2>/dev/null; then
      ok=1
    fi
    ip link del sddpkitbr 2>/dev/null
    ip link del sddpkitprobe 2>/dev/null
    ip netns del sddp-kitprobe 2>/dev/null
  fi
  if ((!ok)); then
    slurm_nodes=1
    slurm_net="one node in the host's network: this machine has no network namespaces, veth or bridges"
  fi
}

slurm_up() {
  mkdir -p "$slurm_work"
  chmod 755 "$slurm_work"
  # The site's NCCL settings, one per level; NCCL names each value it used.
  # The node line is one that may differ between nodes: a tuning variable
  # such as NCCL_NTHREADS set on one node only hangs the first collectives
  # (ranks must agree on it).
  cat >"$slurm_work/ddp.conf" <<'EOF'
Env=NCCL_IB_DISABLE=1
PartitionName=debug Env=NCCL_BUFFSIZE=2097152
NodeName=kitgpu-n0 Env=NCCL_TOPO_DUMP_FILE=/tmp/ddp-kit-nccl-topo.xml
EOF
  echo "required $kit/cluster/lib/spank_ddp.so agent=$agent config=$slurm_work/ddp.conf" >"$slurm_work/plugstack.conf"
  chmod 644 "$slurm_work"/*
  local gpu_opts=() net_opts=()
  [[ $device == cuda ]] && gpu_opts=(--gpu-files /dev/nvidia0)
  ((slurm_nodes == 1)) && net_opts=(--host-network)
  run slurm-up 90 "$slurm_cluster" up --name "$slurm_name" --nodes "$slurm_nodes" --slurm "$kit/cluster" \
    --plugstack "$slurm_work/plugstack.conf" "${gpu_opts[@]}" "${net_opts[@]}"
  if ((rc == 0)); then
    row "Slurm cluster from the kit" PASS "$(grep -o 'Slurm [0-9.]*' "$kit/MANIFEST" | head -1); $slurm_nodes node(s): $slurm_net; $(tail -2 "$logs/slurm-up.log" | head -1 | cut -c1-120)"
    export SLURM_CONF=/tmp/slurm-ddp-clusters/$slurm_name/slurm.conf
    return 0
  fi
  row "Slurm cluster from the kit" FAIL "rc $rc, see $logs/slurm-up.log"
  return 1
}

slurm_down() { "$slurm_cluster" down --name "$slurm_name" >"$logs/slurm-down.log" 2>&1; }

# srun with the kit's Slurm: srun_ddp NAME SECONDS SRUN_ARGS... -- COMMAND...
# Python workers get the machine's own library path (peer_env); ddp-train
# rows pass keep_lib=1 to keep the kit's (cuBLAS, NCCL).
srun_ddp() {
  local name=$1 limit=$2
  shift 2
  local env_cmd=("${peer_env[@]}")
  ((${keep_lib:-0})) && env_cmd=(env)
  run "$name" "$limit" "${env_cmd[@]}" PATH="$kit/cluster/bin:$PATH" SLURM_CONF="$SLURM_CONF" srun "$@"
}

# A worker per node on the one GPU: NCCL takes two ranks on one GPU only as
# two hosts (trainer/process_group/gpu_claims.hpp).
per_node_hostid=(sh -c 'NCCL_HOSTID=kit-node$GROUP_RANK exec "$@"' sh)

# worker KIND MODULE SCRIPT ARGS...: a Python worker's command in $wcmd, or,
# where $python cannot import MODULE (the kit check's chroot has no Python,
# Debian no Lightning), scripts/standin.sh KIND; $wnote then says so.
worker() {
  local kind=$1 module=$2 script=$3
  shift 3
  if "$python" -c "import $module" >/dev/null 2>&1; then
    wcmd=("$python" "$kit/scripts/$script" "$@") wnote=""
  else
    wcmd=(sh "$kit/scripts/standin.sh" "$kind") wnote=" [stand-in: no $module in ${python##*/} here, the launch path only]"
  fi
}

probe_field() { sed -n "s/.*probe: .*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | head -1; }

slurm_row1() {
  local opts=(--ddp=cpu) args=(cpu)
  [[ $device == cuda ]] && opts=(--gpus-per-node=1 --ddp) args=(cuda)
  worker probe torch probe.py "${args[@]}"
  srun_ddp slurm-1 120 -N1 "${opts[@]}" --ddp-verbose "${wcmd[@]}"
  local log=$logs/slurm-1.log bus cpus locality
  if ! ((rc == 0)) || ! grep -q "probe: rank=0 world=1" "$log"; then
    row "srun -N1 --ddp python (1 worker)" FAIL "rc $rc, see $log"
    return
  fi
  cpus=$(probe_field "$log" cpus)
  if [[ $device != cuda ]]; then
    row "srun -N1 --ddp=cpu python (1 worker)" PASS "backend $(probe_field "$log" backend), CPUs $cpus$wnote"
    return
  fi
  bus=$(probe_field "$log" bus)
  lstopo-no-graphics --of xml "$OUT/topology-$(hostname -s).xml" 2>>"$log"
  locality=$("$python" "$kit/scripts/topology_locality.py" "$OUT/topology-$(hostname -s).xml" "$bus" 2>&1)
  local note="hwloc: $locality"
  [[ $locality =~ local=([^ ]*)\ machine=([^ :]*)$ && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] &&
    note="no locality shown: hwloc puts the whole machine next to the GPU ($locality)"
  if [[ $(probe_field "$log" backend) == nccl && -n $bus ]]; then
    row "srun -N1 --gpus-per-node=1 --ddp python" PASS "GPU $(probe_field "$log" gpu) bus $bus (CUDA_VISIBLE_DEVICES=$(probe_field "$log" visible)), worker CPUs $cpus; $note"
  else
    row "srun -N1 --gpus-per-node=1 --ddp python" FAIL "backend '$(probe_field "$log" backend)', bus '$bus', see $log"
  fi
}

# Rows 2 and 3 from one step over every node of the cluster.
slurm_row23() {
  local opts=(--ddp=cpu) cmd
  worker probe torch probe.py "$device"
  cmd=("${wcmd[@]}")
  [[ $device == cuda ]] && opts=(--gpus-per-node=1 --ddp) cmd=("${per_node_hostid[@]}" "${wcmd[@]}")
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET srun_ddp slurm-23 150 -N"$slurm_nodes" "${opts[@]}" "${cmd[@]}"
  local log=$logs/slurm-23.log
  if [[ $device == cuda ]]; then
    local seen=() missing=() want
    for want in "NCCL_IB_DISABLE set by environment to 1" "NCCL_BUFFSIZE set by environment to 2097152" \
      "NCCL_TOPO_DUMP_FILE set by environment to /tmp/ddp-kit-nccl-topo.xml"; do
      if grep -q "$want" "$log"; then seen+=("${want%% *}"); else missing+=("${want%% *}"); fi
    done
    # The node line is node 0's alone: node 1's NCCL must not have it.
    local leaked=0
    ((slurm_nodes > 1)) && grep "NCCL_TOPO_DUMP_FILE set by environment" "$log" | grep -qv '^\[rank 0\]' && leaked=1
    if ((rc == 0 && ${#missing[@]} == 0 && !leaked)); then
      row "site NCCL settings (ddp.conf) seen by NCCL" PASS "global, partition and node lines: ${seen[*]} in NCCL's INFO lines; the node line only on its node"
    else
      row "site NCCL settings (ddp.conf) seen by NCCL" FAIL "rc $rc; not seen: ${missing[*]:-none}; node line on another node: $leaked; see $log"
    fi
  fi
  local ranks sum
  ranks=$(grep -c "probe: rank=" "$log")
  sum=$(probe_field "$log" allreduce)
  local label="$slurm_nodes node(s) in one step, one all-reduce ($device)"
  if ((rc == 0 && ranks == slurm_nodes)) && [[ $sum == $((slurm_nodes * (slurm_nodes + 1) / 2)) || -n $wnote ]]; then
    row "$label" PASS "MASTER $(probe_field "$log" master), $ranks ranks, sum ${sum:-none}, backend $(probe_field "$log" backend), interface $(probe_field "$log" ifname); $slurm_net$wnote"
  else
    row "$label" FAIL "rc $rc, $ranks ranks, sum '$sum', see $log"
  fi
}

# Lightning and Accelerate, unmodified: CPU (2 workers per node, Gloo), then GPU.
slurm_row4() {
  local devs=(cpu)
  [[ $device == cuda ]] && devs+=(cuda)
  local dev n=$slurm_nodes
  for dev in "${devs[@]}"; do
    local opts=(--ddp=cpu --ddp-procs=2) per=2 wrap=() l_acc=cpu a_cpu=(--cpu)
    [[ $dev == cuda ]] && opts=(--gpus-per-node=1 --ddp) per=1 wrap=("${per_node_hostid[@]}") l_acc=gpu a_cpu=()
    local world=$((n * per))
    worker lightning lightning lightning_train.py --accelerator "$l_acc" --devices "$per" --num-nodes "$n"
    srun_ddp "lightning-$dev" 180 -N"$n" "${opts[@]}" "${wrap[@]}" "${wcmd[@]}"
    local got
    got=$(grep -c "lightning: rank [0-9]* of $world" "$logs/lightning-$dev.log")
    if ((rc == 0 && got == world)); then
      row "Lightning, unmodified, $world workers ($dev)" PASS "$(grep -m1 'lightning: rank 0 ' "$logs/lightning-$dev.log" | sed 's/.*lightning: //')$wnote"
    else
      row "Lightning, unmodified, $world workers ($dev)" FAIL "rc $rc, $got of $world ranks finished, see $logs/lightning-$dev.log"
    fi
    worker accelerate accelerate accelerate_train.py "${a_cpu[@]}"
    srun_ddp "accelerate-$dev" 150 -N"$n" "${opts[@]}" "${wrap[@]}" "${wcmd[@]}"
    got=$(grep -c "accelerate: rank [0-9]* of $world" "$logs/accelerate-$dev.log")
    if ((rc == 0 && got == world)); then
      row "Accelerate, unmodified, $world workers ($dev)" PASS "$(grep -m1 'accelerate: rank 0 ' "$logs/accelerate-$dev.log" | sed 's/.*accelerate: //')$wnote"
    else
      row "Accelerate, unmodified, $world workers ($dev)" FAIL "rc $rc, $got of $world ranks finished, see $logs/accelerate-$dev.log"
    fi
  done
}

# ddp-train through Slurm: one epoch, then the job-wide behaviours.
slurm_row5() {
  local n=$slurm_nodes opts=(--ddp=cpu --ddp-procs=2) wrap=() dev=cpu per=2
  [[ $device == cuda ]] && opts=(--gpus-per-node=1 --ddp) wrap=("${per_node_hostid[@]}") dev=cuda per=1
  local world=$((n * per))
  local last=$((world - 1)) t=(--data "$data" --device "$dev" --model mlp --batch-size 128)
  local -x keep_lib=1
  srun_ddp train-1epoch 200 -N"$n" "${opts[@]}" "${wrap[@]}" "$train" "${t[@]}" --epochs 1 --metrics "$OUT/slurm-train.jsonl"
  accuracy_row "srun --ddp ddp-train, $world rank(s) ($dev): 1 epoch" "$OUT/slurm-train.jsonl" train-1epoch

  srun_ddp train-killed 120 -N"$n" "${opts[@]}" "${wrap[@]}" "$train" "${t[@]}" --epochs 2 --crash-at-step 50
  if ((rc != 0 && !hung)) && grep -q "root cause: worker rank $last" "$logs/train-killed.log"; then
    row "srun --ddp ddp-train ($dev): rank $last killed at step 50" PASS "stopped in ${took}s, rc $rc: $(grep -m1 -o "root cause: worker rank ${last}[^:]*" "$logs/train-killed.log")"
  else
    row "srun --ddp ddp-train ($dev): rank $last killed at step 50" FAIL "rc $rc after ${took}s, see $logs/train-killed.log"
  fi

  srun_ddp train-hang 120 -N"$n" "${opts[@]}" --ddp-hang-timeout=5 "${wrap[@]}" "$train" "${t[@]}" --epochs 2 \
    --stall-at-step 50 --comm-timeout 100
  if ((rc != 0 && !hung)) && grep -q "root cause: worker rank $last .*hung: no progress" "$logs/train-hang.log"; then
    row "srun --ddp-hang-timeout=5 ddp-train ($dev): rank $last stalls" PASS "named as the hang, stopped in ${took}s, rc $rc"
  else
    row "srun --ddp-hang-timeout=5 ddp-train ($dev): rank $last stalls" FAIL "rc $rc after ${took}s, see $logs/train-hang.log"
  fi

  rm -rf "$slurm_work/snaps"
  srun_ddp train-restart 240 -N"$n" "${opts[@]}" --ddp-restarts=1 "${wrap[@]}" "$train" "${t[@]}" --epochs 2 \
    --limit-train 12800 --snapshot-dir "$slurm_work/snaps" --crash-at-step 150 --metrics "$OUT/slurm-restart.jsonl"
  if ((rc == 0)) && grep -q "resuming from $slurm_work/snaps/snapshot-" "$logs/train-restart.log" &&
    grep -q '"resumed":1' "$OUT/slurm-restart.jsonl"; then
    row "srun --ddp-restarts=1 ddp-train ($dev): killed, resumed" PASS "$(grep -m1 -o "resuming from [^ ]*" "$logs/train-restart.log"), test accuracy $(final_value "$OUT/slurm-restart.jsonl" test_accuracy)"
  else
    row "srun --ddp-restarts=1 ddp-train ($dev): killed, resumed" FAIL "rc $rc after ${took}s, see $logs/train-restart.log"
  fi
}

# A GPU straggler, from NCCL's own timers (our profiler plugin), within 60 s
# of the start: the rule's first 30 s are never judged, then 6 windows of 5 s.
slurm_row6() {
  [[ $device == cuda ]] || return 0
  local label="GPU straggler named from NCCL's collectives, no script change"
  if ((slurm_nodes < 2)); then
    row "$label" FAIL "one node only: $slurm_net"
    return 0
  fi
  worker straggle torch straggle.py 75 1 4
  SDDP_NCCL_PROFILER=1 srun_ddp straggle 150 -N2 --gpus-per-node=1 --ddp --ddp-verbose "${per_node_hostid[@]}" "${wcmd[@]}"
  local log=$logs/straggle.log said
  said=$(grep -m1 "straggler: node 1 " "$log")
  if ((rc == 0)) && [[ $said == *"GPU was outside NCCL's collectives"* ]]; then
    row "$label" PASS "${said#*straggler: }; $(grep -c 'straggle: rank' "$log") ranks finished"
  else
    row "$label" FAIL "rc $rc; named: ${said:-nobody}; the windows: $(grep -c 'busiest rank per node (GPU' "$log") with GPU figures; see $log"
  fi
}

# slurm_rows LIST: the chosen rows (slurm-1..slurm-6) on one cluster.
slurm_rows() {
  local want=",$1,"
  local PATH=$kit/cluster/bin:$kit/cluster/sbin:$PATH
  slurm_probe_network
  if ! slurm_up; then
    SLURM_DDP_CLUSTER_LOGS=$logs/slurm-daemons slurm_down  # what a half-made cluster left
    return 0
  fi
  [[ $want == *,slurm-1,* ]] && slurm_row1
  [[ $want == *,slurm-2,* || $want == *,slurm-3,* ]] && slurm_row23
  # ddp-train before the frameworks: the rows that need nothing but the kit
  # first, if the budget runs short.
  [[ $want == *,slurm-5,* ]] && slurm_row5
  [[ $want == *,slurm-4,* ]] && slurm_row4
  [[ $want == *,slurm-6,* ]] && slurm_row6
  # cluster.sh keeps the daemons' logs where SLURM_DDP_CLUSTER_LOGS says.
  SLURM_DDP_CLUSTER_LOGS=$logs/slurm-daemons slurm_down
  return 0
}
