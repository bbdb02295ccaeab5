#!/usr/bin/env bash
# A real Slurm cluster (Debian's: 22.05 here, 24.11 in a trixie chroot, 26.05
# in sid) on this one machine, for tests and for people.
#
#   cluster.sh up     [--name NAME] [--nodes N] [--gpus G] [--index I] [--ib]
#                     [--plugin SO] [--agent PATH] [--plugstack FILE]
#                     [--cli-filter FILE] [--task-prolog FILE] [--configless]
#                     [--slurmd-timeout SECONDS] [--slurm DIR] [--gpu-files LIST]
#                     [--host-network] [--preemption]
#   cluster.sh down   [--name NAME]
#   cluster.sh env    [--name NAME]     # prints `export SLURM_CONF=...`: eval it
#   cluster.sh shell  [--name NAME]     # a shell whose srun/sbatch use the cluster
#   cluster.sh status [--name NAME]
#   cluster.sh node   [--name NAME] NODE_INDEX CMD...  # run CMD in a node's netns
#   cluster.sh login  [--name NAME] CMD...  # run CMD on a login host: a netns on the
#                     cluster's network (198.18.INDEX.200) that is neither a node nor
#                     the controller's host, made on first use
#   cluster.sh start-slurmd [--name NAME] [--configless] [--slurm DIR] NODE_INDEX  # again, after a test killed it
#
# What it builds, per cluster NAME (lowercase letters and digits, at most 8):
#   - slurmctld in the host network namespace, on a port of its own;
#   - N x `slurmd -N NAME-nI`, each in its own network namespace "sddp-NAME-nI"
#     with its own IPv4 address 198.18.INDEX.(10+I) on eth0, joined by the bridge
#     "sddpbr-NAME" (host side 198.18.INDEX.1). 198.18.0.0/15 is the range RFC 2544
#     sets aside for network test benches: nothing real lives there.
#   - node names that no resolver knows, so nothing can cheat with
#     getaddrinfo(NodeName): only NodeAddr leads to a node;
#   - optionally (--ib) a second network, "ib0" in every node (198.19.INDEX.10+I on
#     bridge "sddpib-NAME"), standing in for IPoIB: an interface that carries
#     traffic but is not the one Slurm's NodeAddr names;
#   - optionally G fake GPUs per node: char devices with NVIDIA's major number 195,
#     declared in gres.conf with AutoDetect=off, so Slurm sets
#     CUDA_VISIBLE_DEVICES and SLURM_STEP_GPUS exactly as on a GPU node;
#   - plugstack.conf loading the given plugin (or an admin-style file of your own);
#   - optionally (--cli-filter FILE) FILE as cli_filter.lua next to slurm.conf and
#     CliFilterPlugins=cli_filter/lua in it, so this cluster's srun/salloc/sbatch
#     run that Lua script before they submit (conf/cli_filter.lua, for example);
#   - optionally (--task-prolog FILE) TaskProlog=FILE in slurm.conf;
#   - optionally (--slurm DIR) Slurm's programs from DIR instead of the system's:
#     DIR/bin (clients) and DIR/sbin (daemons) first on PATH, slurmd told where
#     DIR/sbin/slurmstepd is (-d), PluginDir=DIR/lib (DIR/lib/slurm where
#     that exists, as in a source install's prefix). The GPU kit carries
#     Debian's Slurm this way to a GPU machine that has none (tests/gpu/kit.sh);
#     give --slurm again to start-slurmd, and put DIR/bin first on PATH for srun;
#   - optionally (--gpu-files LIST) real GPUs instead of fake ones: gres.conf
#     names the comma-separated device files (/dev/nvidia0) on every node, as a
#     GPU machine's own GRES would; no device is made;
#   - optionally (--host-network) one node in the host's network namespace,
#     slurmctld and slurmd on 127.0.0.1, for machines without network
#     namespaces or veth (some VMs and sandboxes): no bridge, no netns;
#   - optionally (--configless) a configless site: slurmctld with
#     SlurmctldParameters=enable_configless, each slurmd started with
#     --conf-server and no config file, so it runs on the files slurmctld
#     ships (slurm.conf, gres.conf, plugstack.conf, ...), kept in its
#     SlurmdSpoolDir/conf-cache; clients (srun) still read the cluster's
#     directory, as a login node with the config files does.
#   - optionally (--preemption) preemption by partition, as many sites run it:
#     PreemptType=preempt/partition_prio, PreemptMode=CANCEL; jobs of the
#     partition "urgent" (PriorityTier=2, not the default) preempt those of
#     "debug" (PriorityTier=1), which get SIGTERM and GraceTime=10 seconds
#     before they are killed.
#
# Several clusters run side by side when their names and indices differ. `down`
# removes only what `up` recorded in the cluster's directory, in reverse order, so
# it is safe after a half-finished `up` or a failed test, and a no-op when there
# is nothing. Needs root (netns, mknod) and Debian's slurmctld/slurmd.
set -euo pipefail

root_dir=${SLURM_DDP_CLUSTER_ROOT:-/tmp/slurm-ddp-clusters}
name=ddp
nodes=2
gpus=0
index=
plugin=
agent=
plugstack=
cli_filter=
task_prolog=
configless=0
ib=0
slurmd_timeout=30
preemption=0
slurm_dir=
gpu_files=
host_network=0

die() { echo "cluster.sh: $*" >&2; exit 1; }

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

cmd=${1:-}; [[ -n $cmd ]] || usage 1; shift
node_args=()
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --index) index=$2; shift 2 ;;
    --plugin) plugin=$2; shift 2 ;;
    --agent) agent=$2; shift 2 ;;
    --plugstack) plugstack=$2; shift 2 ;;
    --cli-filter) cli_filter=$2; shift 2 ;;
    --task-prolog) task_prolog=$2; shift 2 ;;
    --ib) ib=1; shift ;;
    --configless) configless=1; shift ;;
    --slurmd-timeout) slurmd_timeout=$2; shift 2 ;;
    --slurm) slurm_dir=$2; shift 2 ;;
    --gpu-files) gpu_files=$2; shift 2 ;;
    --host-network) host_network=1; shift ;;
    --preemption) preemption=1; shift ;;
    -h|--help) usage 0 ;;
    *) node_args=("$@"); break ;;
  esac
done

if [[ -n $slurm_dir ]]; then
  [[ -x $slurm_dir/sbin/slurmd && -x $slurm_dir/sbin/slurmstepd && -d $slurm_dir/lib ]] ||
    die "--slurm '$slurm_dir': no sbin/slurmd, sbin/slurmstepd and lib/ there (a tree as tests/gpu/kit.sh packs it)"
  slurm_dir=$(cd "$slurm_dir" && pwd)
  export PATH=$slurm_dir/bin:$slurm_dir/sbin:$PATH
fi
if [[ -n $gpu_files ]]; then
  IFS=, read -r -a gpu_list <<<"$gpu_files"
  for f in "${gpu_list[@]}"; do [[ -c $f ]] || die "--gpu-files: '$f' is not a character device (a GPU's /dev/nvidiaN)"; done
  gpus=${#gpu_list[@]}
fi
((host_network == 0 || nodes == 1)) || die "--host-network runs one node (the host has one network namespace): use --nodes 1"
[[ $name =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--name '$name': use 1-8 lowercase letters/digits, starting with a letter (it becomes part of interface names, which Linux caps at 15 characters)"
[[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 64)) || die "--nodes '$nodes': use 1..64"
[[ $gpus =~ ^[0-9]+$ ]] && ((gpus <= 16)) || die "--gpus '$gpus': use 0..16"
[[ $slurmd_timeout =~ ^[0-9]+$ ]] && ((slurmd_timeout >= 6 && slurmd_timeout <= 600)) ||
  die "--slurmd-timeout '$slurmd_timeout': use 6..600 seconds"
if [[ -z $index ]]; then
  # A stable index per name keeps subnets and ports of different clusters apart.
  index=$(( $(printf '%s' "$name" | cksum | cut -d' ' -f1) % 200 + 20 ))
fi
[[ $index =~ ^[0-9]+$ ]] && ((index >= 1 && index <= 254)) || die "--index '$index': use 1..254"
[[ -z $cli_filter || -r $cli_filter ]] || die "--cli-filter '$cli_filter': no such readable file"

dir=$root_dir/$name
conf=$dir/slurm.conf
record=$dir/created            # one line per resource, in creation order
bridge=sddpbr-$name
subnet=198.18.$index
ctld_addr=$subnet.1
ctld_port=$((7000 + index))
node_name() { echo "$name-n$1"; }
netns_name() { echo "sddp-$name-n$1"; }
veth_name() { echo "sddp$name$1"; }  # host side; <= 4+8+2 = 14 characters
node_addr() { echo "$subnet.$((10 + $1))"; }
if ((host_network)); then
  ctld_addr=127.0.0.1
  node_addr() { echo 127.0.0.1; }
fi

created() { echo "$*" >>"$record"; }

need_root() { [[ $(id -u) -eq 0 ]] || die "$cmd needs root (network namespaces, mknod)"; }

write_configs() {
  local host last; host=$(hostname -s); last=$((nodes - 1))
  local auth_type=auth/none cred_type=cred/none
  ((configless)) && auth_type=auth/munge cred_type=cred/munge
  local gres_line=
  ((gpus > 0)) && gres_line="Gres=gpu:$gpus"
  cat >"$conf" <<EOF
# Generated by tests/cluster/cluster.sh for the local test cluster "$name".
ClusterName=$name
# slurmctld accepts only its own short hostname here; the address in
# parentheses is where every client and slurmd reaches it.
SlurmctldHost=$host($ctld_addr)
SlurmctldPort=$ctld_port
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=$auth_type
CredType=$cred_type
# A requeued batch job may start again only once its launch credential has
# expired (cred_expire, 120 s by default; 26.05 also reads
# SchedulerParameters=requeue_delay): 10 s here (Slurm takes 5 at least), so the
# requeue test does not wait two minutes.
AuthInfo=cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: the harness must run inside containers and CI sandboxes.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# Heterogeneous jobs are started by the backfill scheduler alone, every
# bf_interval (30 s by default): each second here, so a test's het job does
# not wait half a minute for it.
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# The nodes declare more CPUs than this machine has; trust the config.
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=$slurmd_timeout
MessageTimeout=10
KillWait=5
InactiveLimit=0
MinJobAge=30
GresTypes=gpu
NodeName=$name-n[0-$last] CPUs=4 RealMemory=2000 State=UNKNOWN $gres_line
EOF
  # NodeAddr takes a list in hostlist order: node I gets address .(10+I).
  local i addrs=()
  for ((i = 0; i < nodes; i++)); do addrs+=("$(node_addr "$i")"); done
  sed -i "s|^NodeName=.*|& NodeAddr=$(IFS=,; echo "${addrs[*]}")|" "$conf"
  if ((preemption)); then
    # A preempted job's tasks get SIGCONT and SIGTERM, and SIGKILL GraceTime
    # later (slurm.conf(5), GraceTime).
    cat >>"$conf" <<EOF
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 GraceTime=10
PartitionName=urgent Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
EOF
  else
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$conf"
  fi

  {
    echo "AutoDetect=off"
    if [[ -n $gpu_files ]]; then
      echo "NodeName=$name-n[0-$last] Name=gpu File=$gpu_files"
    elif ((gpus > 0)); then
      echo "NodeName=$name-n[0-$last] Name=gpu File=$dir/dev/nvidia[0-$((gpus - 1))]"
    fi
  } >"$dir/gres.conf"

  if [[ -n $plugstack ]]; then
    cp "$plugstack" "$dir/plugstack.conf"
  elif [[ -n $plugin ]]; then
    local args=
    [[ -n $agent ]] && args=" agent=$agent"
    echo "required $plugin$args" >"$dir/plugstack.conf"
  else
    : >"$dir/plugstack.conf"
  fi

  # The cli_filter/lua plugin loads cli_filter.lua from slurm.conf's directory,
  # in every client that reads this slurm.conf (srun, salloc, sbatch); it lives
  # in $dir, so `down` removes it with the directory.
  if [[ -n $cli_filter ]]; then
    cp "$cli_filter" "$dir/cli_filter.lua"
    echo "CliFilterPlugins=cli_filter/lua" >>"$conf"
  fi
  # plugstack.conf lies next to slurm.conf, where Slurm looks by default; a
  # configless slurmd reads the copy in its cache, which an absolute
  # PlugStackConfig= would override with the path on the node.
  if ((configless)); then
    echo "SlurmctldParameters=enable_configless" >>"$conf"
  else
    echo "PlugStackConfig=$dir/plugstack.conf" >>"$conf"
  fi
  if [[ -n $task_prolog ]]; then
    [[ -x $task_prolog ]] || die "--task-prolog $task_prolog is not an executable file"
    echo "TaskProlog=$task_prolog" >>"$conf"
  fi
  if [[ -d $slurm_dir/lib/slurm ]]; then
    echo "PluginDir=$slurm_dir/lib/slurm" >>"$conf"
  elif [[ -n $slurm_dir ]]; then
    echo "PluginDir=$slurm_dir/lib" >>"$conf"
  fi
  write_cgroup_conf
}

# slurmd loads a cgroup plugin even when nothing uses cgroups (proctrack/pgid,
# task/none). On a host with only cgroup v2 and no systemd (a GPU VM, a
# container), the autodetected cgroup/v2 asks systemd over D-Bus for a scope
# and slurmd exits ("cannot connect to dbus system daemon"). 22.05 has no
# CgroupPlugin=disabled, but cgroup/v1's init touches nothing and nothing
# here calls it afterwards. Later releases get CgroupPlugin=disabled, untried:
# the machines that run the chroots have cgroup v1 and never write this file.
write_cgroup_conf() {
  [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs && ! -S /run/dbus/system_bus_socket ]] || return 0
  local plugin=cgroup/v1
  [[ $(slurmd -V 2>/dev/null) =~ \ 2[0-2]\.[0-9]+ ]] || plugin=disabled  # "slurm[-wlm] 22.05.8"
  printf '%s\n' "# cluster.sh: cgroup v2 without systemd here; no cgroups are used" "CgroupPlugin=$plugin" >"$dir/cgroup.conf"
}

wait_for_nodes() {
  local deadline=$((SECONDS + 40)) idle
  while ((SECONDS < deadline)); do
    idle=$(SLURM_CONF=$conf sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    ((idle == nodes)) && return 0
    sleep 0.3
  done
  echo "cluster.sh: nodes did not become idle within 40 s; sinfo says:" >&2
  SLURM_CONF=$conf sinfo -N -l >&2 || true
  tail -n 20 "$dir"/log/*.log >&2 || true
  return 1
}

# A configless slurmd asks slurmctld for its config before it has read any,
# with Slurm's built-in default authentication: munge, at munge's default
# socket. A munged already there (a site's) is used as it is; otherwise this
# cluster starts its own, with a fresh key, and stops it at `down`.
start_munge() {
  local sock=/run/munge/munge.socket.2
  if [[ -S $sock ]] && munge -n </dev/null >/dev/null 2>&1; then return 0; fi
  command -v munged >/dev/null || die "'munged' not found: run packaging/install-deps.sh test"
  mkdir -p /run/munge "$dir/munge"
  chmod 755 /run/munge
  chmod 700 "$dir/munge"
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)"
  created pidfile "$dir/run/munged.pid"
}

# DDP_TEST_PRELOAD (tests/sanitize.sh: the ASan runtime) goes into the
# daemons only, so slurmstepd can host a sanitized spank_ddp.so.
preload=()
[[ -z ${DDP_TEST_PRELOAD:-} ]] || preload=(env "LD_PRELOAD=$DDP_TEST_PRELOAD")

# Node I's slurmd, in its network namespace: at `up`, and again for a test
# that killed it (`start-slurmd`).
start_slurmd() {
  # nsenter, not `ip netns exec`: the latter remounts /sys, and slurmd then
  # fails with "No filesystem mounted on /sys/fs/cgroup".
  local conf_from=(-f "$conf") stepd=() netns=()
  ((configless)) && conf_from=(--conf-server "$ctld_addr:$ctld_port")
  [[ -z $slurm_dir ]] || stepd=(-d "$slurm_dir/sbin/slurmstepd")
  ((host_network)) || netns=(nsenter --net="/var/run/netns/$(netns_name "$1")")
  "${netns[@]}" "${preload[@]}" slurmd -N "$(node_name "$1")" "${conf_from[@]}" "${stepd[@]}"
}

cmd_up() {
  need_root
  local tools=(slurmctld slurmd sinfo mknod ss)
  ((host_network)) || tools+=(ip nsenter)
  for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || die "'$tool' not found: run packaging/install-deps.sh test"
  done
  # A cluster of the same name left behind (a killed test run) is removed first.
  [[ -e $record ]] && cmd_down
  # Another cluster's subnet or port: pick another index rather than collide.
  if ((!host_network)) && ip -4 -o addr show | grep -q " $subnet\.1/"; then
    die "subnet $subnet.0/24 is already in use (another cluster?); choose another --index"
  fi
  if ss -Htln "sport = :$ctld_port" | grep -q .; then
    die "port $ctld_port (slurmctld) is already in use; choose another --index"
  fi
  mkdir -p "$dir"/{state,spool,run,log,dev}
  chmod 755 "$root_dir" "$dir"
  : >"$record"
  created dir "$dir"

  ((host_network)) || make_network
  local i
  for ((i = 0; i < gpus && ${#gpu_files} == 0; i++)); do
    mknod -m 666 "$dir/dev/nvidia$i" c 195 "$i"
  done

  write_configs
  ((configless)) && start_munge

  # -c: start from an empty state; -i: ignore what a previous run left.
  "${preload[@]}" slurmctld -c -i -f "$conf"
  created pidfile "$dir/run/slurmctld.pid"
  for ((i = 0; i < nodes; i++)); do
    start_slurmd "$i"
    created pidfile "$dir/run/slurmd-$(node_name "$i").pid"
  done
  wait_for_nodes
  local where what="$gpus fake GPUs each"
  where="$(node_addr 0).."
  ((host_network)) && where="127.0.0.1, the host's network"
  [[ -n $gpu_files ]] && what="GPUs $gpu_files each"
  echo "cluster.sh: cluster '$name' is up: $nodes nodes ($where), $what"
  echo "cluster.sh: use it with: eval \"\$($0 env --name $name)\""
}

# The bridge, one network namespace per node on it, and --ib's second network.
make_network() {
  ip link add "$bridge" type bridge
  created link "$bridge"
  ip addr add "$subnet.1/24" dev "$bridge"
  ip link set "$bridge" up

  local i ns veth
  for ((i = 0; i < nodes; i++)); do
    ns=$(netns_name "$i"); veth=$(veth_name "$i")
    ip netns add "$ns"
    created netns "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    created link "$veth"
    ip link set "$veth" master "$bridge" up
    ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  if ((ib)); then
    ip link add "sddpib-$name" type bridge
    created link "sddpib-$name"
    ip link set "sddpib-$name" up
    for ((i = 0; i < nodes; i++)); do
      ns=$(netns_name "$i")
      ip link add "sddpi$name$i" type veth peer name ib0 netns "$ns"
      created link "sddpi$name$i"
      ip link set "sddpi$name$i" master "sddpib-$name" up
      ip -n "$ns" addr add "198.19.$index.$((10 + i))/24" dev ib0
      ip -n "$ns" link set ib0 up
    done
  fi
}

# The pid in a pidfile, if it still runs with our config file (pids get reused).
our_pid() {
  local pidfile=$1 pid
  [[ -s $pidfile ]] || return 1
  pid=$(cat "$pidfile")
  [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' </proc/"$pid"/cmdline | grep -q -e "$dir/" -e "$ctld_addr:$ctld_port" ||
    return 1
  echo "$pid"
}

cmd_down() {
  need_root
  [[ -e $record ]] || { echo "cluster.sh: no cluster '$name' here"; return 0; }
  local kind what pid pids daemons=()
  # All daemons at once: SIGTERM, up to 10 s to finish, then SIGKILL.
  while read -r kind what; do
    [[ $kind == pidfile ]] && pid=$(our_pid "$what") && daemons+=("$pid")
  done <"$record"
  if ((${#daemons[@]})); then
    kill -TERM "${daemons[@]}" 2>/dev/null || true
    local alive p
    for _ in $(seq 100); do
      alive=0
      for p in "${daemons[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
      ((alive)) || break
      sleep 0.1
    done
    kill -KILL "${daemons[@]}" 2>/dev/null || true
  fi
  # From Slurm 23.11 on, `scontrol reconfigure` makes slurmctld start a new
  # process of itself, which writes the pidfile only once it is up: one the
  # pidfile did not name yet is found by its config file (one left running
  # would hold the next cluster's port).
  local strays=()
  mapfile -t strays < <(pgrep -f -- "-f $dir/slurm.conf")
  ((${#strays[@]} == 0)) || kill -KILL "${strays[@]}" 2>/dev/null || true
  # The daemons' logs outlive the cluster where SLURM_DDP_CLUSTER_LOGS names
  # a directory (tests/chroot/run.sh shows them when a test failed).
  if [[ -n ${SLURM_DDP_CLUSTER_LOGS:-} && -d $dir/log ]]; then
    mkdir -p "$SLURM_DDP_CLUSTER_LOGS/$name"
    cp -r "$dir/log/." "$SLURM_DDP_CLUSTER_LOGS/$name/" 2>/dev/null || true
  fi
  # A configless slurmd points /run/slurm/conf at its config cache (the last
  # one started wins); clients would read a removed cluster's files from there.
  if [[ -L /run/slurm/conf && $(readlink /run/slurm/conf) == "$dir"/* ]]; then rm -f /run/slurm/conf; fi
  # Then, in reverse creation order: namespaces (killing every job process
  # still inside them), links, and last the directory.
  tac "$record" | while read -r kind what; do
    case $kind in
      netns)
        pids=$(ip netns pids "$what" 2>/dev/null || true)
        [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
        ip netns del "$what" 2>/dev/null || true ;;
      link) ip link del "$what" 2>/dev/null || true ;;
      dir) rm -rf "$what" ;;
    esac
  done
  echo "cluster.sh: cluster '$name' is down"
}

# A login host: its own network namespace on the cluster's bridge, with no
# slurmd and not the controller's address, as a site's login node is (srun
# there reaches slurmctld and the nodes over the network only). Made once,
# removed by `down`.
cmd_login() {
  need_root
  [[ -e $conf ]] || die "no cluster '$name'"
  local ns="sddp-$name-login"
  if [[ ! -e /var/run/netns/$ns ]]; then
    ip netns add "$ns"
    created netns "$ns"
    ip link add "sddp${name}L" type veth peer name eth0 netns "$ns"
    created link "sddp${name}L"
    ip link set "sddp${name}L" master "$bridge" up
    ip -n "$ns" addr add "$subnet.200/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  fi
  exec nsenter --net="/var/run/netns/$ns" env SLURM_CONF="$conf" "$@"
}

cmd_env() {
  [[ -e $conf ]] || die "no cluster '$name' (run: $0 up --name $name)"
  echo "export SLURM_CONF=$conf"
}

case $cmd in
  up) cmd_up ;;
  down) cmd_down ;;
  env) cmd_env ;;
  shell) [[ -e $conf ]] || die "no cluster '$name'"; SLURM_CONF=$conf PS1="[slurm:$name] \\w\\$ " exec bash --norc -i ;;
  status) [[ -e $conf ]] || die "no cluster '$name'"; SLURM_CONF=$conf sinfo -N -l ;;
  start-slurmd)
    [[ -e $conf && ${#node_args[@]} -eq 1 ]] || die "usage: $0 start-slurmd [--name NAME] [--configless] INDEX"
    start_slurmd "${node_args[0]}" ;;
  login)
    ((${#node_args[@]} >= 1)) || die "usage: $0 login [--name NAME] CMD..."
    cmd_login "${node_args[@]}" ;;
  node)
    ((${#node_args[@]} >= 2)) || die "usage: $0 node [--name NAME] INDEX CMD..."
    exec nsenter --net="/var/run/netns/$(netns_name "${node_args[0]}")" "${node_args[@]:1}" ;;
  *) usage 1 ;;
esac
