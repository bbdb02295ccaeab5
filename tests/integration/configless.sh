#!/usr/bin/env bash
# A configless site: every slurmd was started with --conf-server and no
# config file, so it runs on what slurmctld ships it (slurm.conf, gres.conf,
# plugstack.conf, ...) from its SlurmdSpoolDir/conf-cache. Slurm ships no other
# file (not /etc/slurm/ddp.conf, not Debian's plugstack.conf.d/), so the site's
# settings ride on the plugin's line in plugstack.conf (here PortRange= and
# Env=DDP_TEST_SITE=shipped). Checked: the nodes really run configless; the
# settings reach every worker; they come from the node's cache (a change on
# the controller shows only after `scontrol reconfigure` ships it); and from
# Slurm 23.11 on a bare-name file that plugstack.conf includes is shipped too
# (22.05/23.02 ship no included file, which is asserted, so a change shows).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

probe='echo "site=${DDP_TEST_SITE:-none} port=$MASTER_PORT"'
# site_value EXPECTED DESCRIPTION: four workers on two nodes see it.
site_value() {
  run srun -N2 --ddp=cpu --ddp-procs=2 sh -c "$probe"
  expect_rc 0 "$2"
  expect_eq "$(grep -c "^site=$1 port=31[0-9][0-9][0-9]\$" <<<"$OUT")" "4" "$2: every worker sees DDP_TEST_SITE=$1 and a port of PortRange=31000-31999"
}
# wait_for_cache PATTERN FILE: until every node's cached FILE has PATTERN.
wait_for_cache() {
  local deadline=$((SECONDS + 40)) node missing
  while ((SECONDS < deadline)); do
    missing=0
    for node in "$CLUSTER_NAME-n0" "$CLUSTER_NAME-n1"; do
      grep -q -- "$1" "$CLUSTER_DIR/spool/$node/conf-cache/$2" 2>/dev/null || missing=1
    done
    ((missing)) || return 0
    sleep 0.5
  done
  diagnose
  fail "the nodes' cached $2 did not get '$1' within 40 s of scontrol reconfigure"
}

# --- the nodes run configless ---------------------------------------------------
for node in "$CLUSTER_NAME-n0" "$CLUSTER_NAME-n1"; do
  pid=$(cat "$CLUSTER_DIR/run/slurmd-$node.pid")
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  expect_in "$cmdline" "--conf-server" "slurmd of $node started configless"
  expect_not_in "$cmdline" " -f " "slurmd of $node has no config file"
  cmp -s "$CLUSTER_DIR/plugstack.conf" "$CLUSTER_DIR/spool/$node/conf-cache/plugstack.conf" ||
    fail "$node: no shipped copy of plugstack.conf in its conf-cache"
done

# --- the settings on the plugin's line reach every worker -------------------------
site_value shipped "srun --ddp on configless nodes"

# --- ... from the node's cache: a change on the controller needs reconfigure ------
sed -i 's/DDP_TEST_SITE=shipped/DDP_TEST_SITE=changed/' "$CLUSTER_DIR/plugstack.conf"
site_value shipped "before scontrol reconfigure the nodes still run on their cached plugstack.conf"
scontrol reconfigure || fail "scontrol reconfigure"
wait_for_cache "DDP_TEST_SITE=changed" plugstack.conf
site_value changed "after scontrol reconfigure"

# --- an included file --------------------------------------------------------------
release=$(srun --version | sed -n 's/^slurm[^0-9]*\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"$release"
sed 's/DDP_TEST_SITE=changed/DDP_TEST_SITE=included/' "$CLUSTER_DIR/plugstack.conf" >"$CLUSTER_DIR/ddp-plugstack.conf"
echo "include ddp-plugstack.conf" >"$CLUSTER_DIR/plugstack.conf"
scontrol reconfigure || fail "scontrol reconfigure"
wait_for_cache "include ddp-plugstack.conf" plugstack.conf
# A mistake on the plugin's line stops --ddp steps with its message, and
# nothing else: plain steps (and slurmd, and the prologs) go on.
bad_line_check() {
  sed -i 's/PortRange=31000-31999/PortRange=9-1/' "$CLUSTER_DIR/ddp-plugstack.conf"
  run srun -N1 true
  expect_rc 0 "a plain srun with a bad word on the plugin's line"
  run srun -N1 --ddp=cpu true
  expect_failure "srun --ddp with a bad word on the plugin's line"
  expect_in "$ERR" "plugstack.conf argument 'PortRange=9-1'" "the message names the bad word"
  sed -i 's/PortRange=9-1/PortRange=31000-31999/' "$CLUSTER_DIR/ddp-plugstack.conf"
}
if ((major > 23 || (major == 23 && minor >= 11))); then
  wait_for_cache "DDP_TEST_SITE=included" ddp-plugstack.conf
  site_value included "Slurm $major.$minor: the plugin's line in a file plugstack.conf includes"
  bad_line_check
  pass "configless (Slurm $major.$minor): the plugstack.conf line's settings reach every worker from the nodes' caches, included files too"
else
  for node in "$CLUSTER_NAME-n0" "$CLUSTER_NAME-n1"; do
    [[ ! -e $CLUSTER_DIR/spool/$node/conf-cache/ddp-plugstack.conf ]] ||
      fail "Slurm $major.$minor shipped an included plugstack file: doc/admin.md says it does not; update both"
  done
  bad_line_check
  pass "configless (Slurm $major.$minor): the plugstack.conf line's settings reach every worker from the nodes' caches; included files are not shipped, as documented"
fi
