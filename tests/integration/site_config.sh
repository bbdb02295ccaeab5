#!/usr/bin/env bash
# The site config named by config= on the plugstack.conf line: its port range
# is used, and a broken or unsafe config stops --ddp steps with a message that
# names the file, the line and the fix (and leaves steps without --ddp alone).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
config=${1:?path to the site config named in plugstack.conf}
good=$(cat "$config")
restore() { printf '%s\n' "$good" >"$config"; chmod 644 "$config"; }
trap restore EXIT

run srun -N2 --ddp=cpu /bin/sh -c 'echo "port=$MASTER_PORT"'
expect_rc 0 "srun with the site config"
for port in $(sed -n 's/^port=//p' <<<"$OUT"); do
  ((port >= 23100 && port <= 23109)) || fail "MASTER_PORT $port is outside port_range 23100-23109"
done
expect_eq "$(sed -n 's/^port=//p' <<<"$OUT" | sort -u | wc -l)" "1" "one MASTER_PORT on both nodes"

run srun -N1 --ddp=cpu --ddp-port=23999 /bin/sh -c 'echo "port=$MASTER_PORT"'
expect_in "$OUT" "port=23999" "--ddp-port overrides the derived port"

printf '%s\nport_rnage = 1-2\n' "$good" >"$config"
run srun -N1 --ddp=cpu true
expect_rc 1 "unknown key"
bad_line=$(($(wc -l <<<"$good") + 1))
expect_in "$ERR" "spank_ddp: $config:$bad_line: unknown key 'port_rnage'" "unknown key names file and line"
run srun -N1 true
expect_rc 0 "a broken site config does not affect steps without --ddp"

restore
chmod 666 "$config"
run srun -N1 --ddp=cpu true
expect_rc 1 "world-writable config"
expect_in "$ERR" "must be owned by root and writable only by root; fix with: chown root $config && chmod go-w $config" "unsafe config refused"
pass "site config: port range used, errors name file/line/fix"
