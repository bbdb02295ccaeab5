#!/usr/bin/env bash
# The site config named by config= on the plugstack.conf line: port range and
# environment are applied, and a broken, unsafe or missing config (or agent)
# stops --ddp steps with one message naming the file, the line and the fix,
# while steps without --ddp go on.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=${1:?path to the site config named in plugstack.conf}
plugstack=$CLUSTER_DIR/plugstack.conf  # the cluster's own copy, read by every srun and step
good=$(cat "$config")
good_plugstack=$(cat "$plugstack")
restore() {
  rm -rf "$config"
  printf '%s\n' "$good" >"$config"
  chmod 644 "$config"
  printf '%s\n' "$good_plugstack" >"$plugstack"
}
trap restore EXIT

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

restore
chmod 666 "$config"
run srun -N1 --ddp=cpu true
expect_failure "world-writable config"
expect_in "$ERR" "must be owned by root and writable only by root; fix with: chown root $config && chmod go-w $config" "unsafe config refused"

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
restore
run srun -N2 --ddp=cpu true
expect_rc 0 "restored config works again"
sinfo_states=$(sinfo -h -N -o '%T' | sort -u)
expect_eq "$sinfo_states" "idle" "no node drained by any of this"
pass "site config: port range, environment, errors name file/line/fix"
