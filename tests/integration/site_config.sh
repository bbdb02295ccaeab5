#!/usr/bin/env bash
# The site config named by config= on the plugstack.conf line: port range and
# environment are applied, and a broken, unsafe or missing config (or agent)
# stops --ddp steps with one message naming the file, the line and the fix,
# while steps without --ddp go on.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=${1:?path to the site config named in plugstack.conf}
check_config=${2:?path to ddp-check-config}
plugstack=$CLUSTER_DIR/plugstack.conf  # the cluster's own copy, read by every srun and step
site_dir=$(dirname "$config")
good=$(cat "$config")
good_plugstack=$(cat "$plugstack")
good_dir_mode=$(stat -c %a "$site_dir")
restore() {
  rm -rf "$config" "$site_dir/real.conf"
  printf '%s\n' "$good" >"$config"
  chmod 644 "$config"
  chmod "$good_dir_mode" "$site_dir"
  printf '%s\n' "$good_plugstack" >"$plugstack"
}
trap 'restore; cleanup_work' EXIT

run srun -N2 --ddp=cpu /bin/sh -c 'echo "port=$MASTER_PORT"'
expect_rc 0 "srun with the site config"
for port in $(sed -n 's/^port=//p' <<<"$OUT"); do
  ((port >= 23100 && port <= 23109)) || fail "MASTER_PORT $port is outside PortRange=23100-23109"
done
expect_eq "$(sed -n 's/^port=//p' <<<"$OUT" | sort -u | wc -l)" "1" "one MASTER_PORT on both nodes"

run srun -N1 --ddp=cpu --ddp-port=23999 /bin/sh -c 'echo "port=$MASTER_PORT"'
expect_in "$OUT" "port=23999" "--ddp-port overrides the derived port"

# Env= yields to the user's value, ForceEnv= does not; neither touches non-DDP steps.
run env NCCL_NET=IB srun -N1 --ddp=cpu /bin/sh -c 'echo "debug=$NCCL_DEBUG net=$NCCL_NET"'
expect_eq "$OUT" "debug=WARN net=Socket" "site defaults and enforced values"
run env NCCL_DEBUG=INFO NCCL_NET=IB srun -N1 --ddp=cpu /bin/sh -c 'echo "debug=$NCCL_DEBUG net=$NCCL_NET"'
expect_eq "$OUT" "debug=INFO net=Socket" "the user's NCCL_DEBUG kept, NCCL_NET enforced"
run srun -N1 /bin/sh -c 'echo "debug=${NCCL_DEBUG:-unset}"'
expect_eq "$OUT" "debug=unset" "no site environment without --ddp"

printf '%s\nPortRnage=1-2\n' "$good" >"$config"
bad_line=$(($(wc -l <<<"$good") + 1))
run srun -N2 --ddp=cpu true
expect_failure "unknown key"
expect_in "$ERR" "ddp: $config:$bad_line: unknown key 'PortRnage'; known keys:" "unknown key names file and line"
expect_eq "$(grep -c "unknown key" <<<"$ERR")" "2" "one message per node (the config is per node), not per task"
run srun -N1 true
expect_rc 0 "a broken site config does not affect steps without --ddp"

# A node list Slurm cannot read is an error too, not a line that matches nothing.
printf '%s\nNodeName=n[3-1] BindCpus=no\n' "$good" >"$config"
run srun -N1 --ddp=cpu true
expect_failure "unreadable NodeName list"
expect_in "$ERR" "ddp: $config:$bad_line: NodeName=n[3-1]: cannot parse the node list 'n[3-1]'; write it as in slurm.conf" "bad NodeName list names file and line"

restore
chmod 666 "$config"
run srun -N1 --ddp=cpu true
expect_failure "world-writable config"
expect_in "$ERR" "must be owned by root and writable only by root; fix with: chown root $config && chmod go-w $config" "unsafe config refused"

# The same rule for group-writable, a file of another owner, and a link to one.
unsafe="must be owned by root and writable only by root; fix with: chown root $config && chmod go-w $config"
restore
chmod 664 "$config"
run srun -N1 --ddp=cpu true
expect_failure "group-writable config"
expect_in "$ERR" "ddp: the site config $config $unsafe" "group-writable config refused"

restore
chown nobody "$config"
run srun -N1 --ddp=cpu true
expect_failure "config owned by a user"
expect_in "$ERR" "ddp: the site config $config $unsafe" "config owned by a user refused"

restore
cp "$config" "$WORK/user.conf" && chown nobody "$WORK/user.conf"
rm "$config" && ln -s "$WORK/user.conf" "$config"
run srun -N1 --ddp=cpu true
expect_failure "link to a user's file"
expect_in "$ERR" "ddp: the site config $config (a link to $WORK/user.conf) must be owned by root and writable only by root; fix with: chown root $WORK/user.conf" "a link to a user's file refused, naming the file"

# A link to a safe file is fine (sites link configs from shared storage).
restore
mv "$config" "$site_dir/real.conf" && ln -s "$site_dir/real.conf" "$config"
run srun -N1 --ddp=cpu /bin/sh -c 'echo "debug=$NCCL_DEBUG"'
expect_rc 0 "a link to a root-owned config"
expect_eq "$OUT" "debug=WARN" "the config read through the link"

# Whoever can write to the directory can replace the file in it.
restore
chmod 777 "$site_dir"
run srun -N1 --ddp=cpu true
expect_failure "config in a world-writable directory"
expect_in "$ERR" "ddp: the directory $site_dir above the site config $config must be owned by root and writable only by root, or whoever can write to it can replace the site config; fix with: chown root $site_dir && chmod go-w $site_dir" "writable directory refused"

restore
rm "$config" && mkdir "$config"
run srun -N1 --ddp=cpu true
expect_in "$ERR" "ddp: the site config $config is not a regular file" "config that is a directory"

restore
sed -i "s|config=$config|config=$config.missing|" "$plugstack"
run srun -N1 --ddp=cpu true
expect_in "$ERR" "ddp: cannot read the site config $config.missing: No such file or directory (named by config= in plugstack.conf)" "missing config"

restore
sed -i "s|agent=[^ ]*|agent=/nonexistent/ddp-agent|" "$plugstack"
run srun -N1 --ddp=cpu true
expect_failure "missing agent"
expect_in "$ERR" "ddp: cannot execute the agent /nonexistent/ddp-agent: No such file or directory; install ddp-agent there or set agent=PATH" "missing agent"
# A PortRange inside the kernel's ephemeral ports works, and node 0's slurmd
# log tells the admin (the user cannot fix it).
restore
ephemeral=$("$DDP_SOURCE_DIR/tests/cluster/cluster.sh" node --name "$CLUSTER_NAME" 0 \
  cat /proc/sys/net/ipv4/ip_local_port_range | awk '{print $1}')
sed -i "s/^PortRange=[0-9-]*/PortRange=$ephemeral-$((ephemeral + 15))/" "$config"
run srun -N1 --ddp=cpu true
expect_rc 0 "a PortRange inside the ephemeral ports still works"
expect_not_in "$ERR" "ephemeral" "the user is not told what only the admin can fix"
grep -q "ddp: PortRange=$ephemeral-$((ephemeral + 15)) overlaps the kernel's ephemeral ports" \
  "$CLUSTER_DIR/log/slurmd-$CLUSTER_NAME-n0.log" || fail "node 0's slurmd log does not name the overlap"

# The kill switch: off for the partition, --ddp steps run as plain srun
# steps (no agent, no contract variables) and the user reads why, once.
restore
printf '%s\nPartitionName=debug Enabled=no\n' "$good" >"$config"
run srun -N2 --ddp=cpu /bin/sh -c 'echo "rank=${RANK:-none} port=${MASTER_PORT:-none}"'
expect_rc 0 "a --ddp step in a partition where the site turned it off"
expect_eq "$OUT" $'rank=none port=none\nrank=none port=none' "both nodes ran the command plainly"
expect_eq "$(grep -c "turned off" <<<"$ERR")" "1" "the switch is said once per step"
expect_in "$ERR" "ddp: --ddp is turned off in partition debug by the site (Enabled=no, $config:$bad_line), so this step runs as a plain srun step" "the user reads where it was turned off"
# Site-wide from the plugstack line (configless sites have only that file).
restore
sed -i "s|config=$config|& Enabled=no|" "$plugstack"
run srun -N1 --ddp=cpu /bin/sh -c 'echo "rank=${RANK:-none}"'
expect_eq "$OUT" "rank=none" "off site-wide from plugstack.conf"
expect_in "$ERR" "(Enabled=no, plugstack.conf arguments)" "the plugstack words named"

# The admin's check reads the same files as the plugin, before any user does.
restore
run "$check_config" --plugstack "$plugstack"
expect_rc 0 "ddp-check-config on a good site config"
expect_in "$OUT" "partition debug: --ddp on; PortRange=23100-23109" "each partition's settings"
expect_in "$OUT" "0 error(s)" "no errors"
printf '%s\nPortRnage=1-2\n' "$good" >"$config"
run "$check_config" --plugstack "$plugstack"
expect_rc 1 "ddp-check-config on a config with a typo"
expect_in "$OUT" "error: $config:$bad_line: unknown key 'PortRnage'" "the typo's file and line"
printf '%s\nPartitionName=gpu-old Enabled=no\n' "$good" >"$config"
run "$check_config" --plugstack "$plugstack"
expect_rc 0 "a warning alone passes"
expect_in "$OUT" "warning: $config:$bad_line: PartitionName=gpu-old: Slurm has no partition of that name (it has: debug)" \
  "a partition slurmctld does not know"
run "$check_config" --plugstack "$plugstack" --strict
expect_rc 1 "--strict: a warning fails"
printf '%s\nPartitionName=debug Enabled=no\n' "$good" >"$config"
run "$check_config" --plugstack "$plugstack" --quiet
expect_not_in "$OUT" "partition debug" "--quiet: problems only"
expect_not_in "$OUT" "error(s)" "--quiet: no summary"
run "$check_config" --plugstack "$plugstack"
expect_in "$OUT" "partition debug: --ddp off (Enabled=no, $config:$bad_line)" "the kill switch shown per partition"
restore
sed -i "s|^required [^ ]*|required /nonexistent/spank_ddp.so|" "$plugstack"
run "$check_config" --plugstack "$plugstack"
expect_rc 1 "a required line naming a missing plugin"
expect_in "$OUT" "error: $plugstack:1: /nonexistent/spank_ddp.so does not exist: slurmd will not start" "the missing plugin"

restore
run srun -N2 --ddp=cpu true
expect_rc 0 "restored config works again"
sinfo_states=$(sinfo -h -N -o '%T' | sort -u)
expect_eq "$sinfo_states" "idle" "no node drained by any of this"
pass "site config: port range, environment, errors name file/line/fix"
