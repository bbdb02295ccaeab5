#!/usr/bin/env bash
# ddp-agent without Slurm, like `torchrun --standalone`.
set -euo pipefail
agent=${1:?path to ddp-agent}
src=${2:?source dir}
out=$(timeout 90 "$agent" --nproc 2 -- /usr/bin/python3 "$src/tests/integration/fixtures/allreduce.py")
[[ $(grep -c 'sum=3 expected=3 OK$' <<<"$out") == 2 ]] || { echo "$out"; echo "FAIL: expected 2 OK ranks"; exit 1; }
set +e
timeout 30 "$agent" -- true 2>/tmp/agent-err.$$; rc=$?
set -e
[[ $rc == 2 ]] && grep -q -- "--nproc N" /tmp/agent-err.$$ || { cat /tmp/agent-err.$$; echo "FAIL: no --nproc should say how"; exit 1; }
rm -f /tmp/agent-err.$$
# The seeds' style of script (DistributedSampler, DDP, Fashion-MNIST), unmodified.
out=$(timeout 120 "$agent" --nproc 2 -- /usr/bin/python3 "$src/examples/train_fashion_mnist.py" --epochs 1)
grep -q 'epoch 1/1: test accuracy 0\.[7-9]' <<<"$out" || { echo "$out"; echo "FAIL: standalone training"; exit 1; }
# MASTER_PORT never from the kernel's ephemeral ports, which any outgoing
# connection may take before TCPStore binds it (EADDRINUSE in TCPStore, the
# likelier the more connections the node has): in a network namespace whose
# ephemeral range is 40000-40999, the port is one of the default PortRange.
out=$(timeout 60 unshare --net /usr/bin/python3 - "$agent" <<'PY' 2>&1
import subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
with open("/proc/sys/net/ipv4/ip_local_port_range", "w") as f:
    f.write("40000 40999")
r = subprocess.run([sys.argv[1], "--nproc", "1", "--", "/bin/sh", "-c", 'echo "port=$MASTER_PORT"'],
                   capture_output=True, text=True, timeout=30)
print(r.stdout + r.stderr + "rc=%d" % r.returncode)
PY
) || true
port=$(sed -n 's/.*port=\([0-9]*\)$/\1/p' <<<"$out")
[[ $out == *rc=0* && -n $port ]] && ((port >= 20000 && port <= 29999)) ||
  { echo "$out"; echo "FAIL: the standalone MASTER_PORT should come from PortRange 20000-29999, not the ephemeral 40000-40999"; exit 1; }
echo "PASS: standalone agent runs torch workers; MASTER_PORT $port, outside the ephemeral ports"
