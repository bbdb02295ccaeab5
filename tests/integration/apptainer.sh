#!/usr/bin/env bash
# Workers in a container: `srun -N2 --ddp=cpu --ddp-procs=2 apptainer exec
# IMAGE python3 SCRIPT` trains Fashion-MNIST with DDP (Gloo) as 4 ranks on 2
# nodes, every worker in an apptainer container of a directory image: the
# agent runs on the node, each worker is an `apptainer exec`. Every rank runs
# inside (a script and a marker that only the image has), the ranks end with
# the same parameters, and the model learns. A worker failing inside the
# container is the job's root cause, with its exit code, and its node's other
# worker and the other node's workers are stopped, containers and all.
#
# Registered only where configure found apptainer: CI runs it in the Debian
# unstable chroot (tests/chroot/run.sh sid, apptainer 1.4.5), as root.
# What apptainer needs there, all given here, none in apptainer.conf:
#   - a root that is a mount namespace's root, not a chroot(2): apptainer joins
#     the mount namespace it makes, which lands a chrooted process on the
#     host's / ("Running inside a weak chrooted environment"). chroot/run.sh
#     enters its chroot by pivot_root for this.
#   - --no-privs: root's container gets the full capability set ("root default
#     capabilities = full"), and apptainer aborts ("Requesting capability set
#     ... while permitted capability set is ...") where its own bounding set
#     lacks one, as on CI machines that are containers themselves (this one has
#     no CAP_SYS_RESOURCE). Training needs no capability.
#   - --contain: nothing of the host but /dev, /proc and /sys (no $HOME, /tmp,
#     /var/tmp, working directory), so Python, the script and the data can only
#     come from the image. The environment is passed on (no --cleanenv): that
#     is how the agent's torchrun variables reach the workers. The network
#     namespace is the node's (no --net): Gloo talks over the node's eth0.
#   - nothing else: no setuid starter (root), the packaged sessiondir,
#     overlay, devpts, passwd/group settings work as they are.
# The image is hard links (cp -al) to this system's /usr and /etc, made in
# /var/tmp (it must be on /usr's filesystem; /tmp is a tmpfs in the chroot);
# apptainer mounts a directory image read-only, so nothing writes through.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

command -v apptainer >/dev/null || fail "apptainer is not installed (configure found it)"
image=$(mktemp -d /var/tmp/ddp-apptainer-image.XXXXXX)
trap 'rm -rf "$image"; cleanup_work' EXIT
cp -al /usr /etc "$image/" 2>"$WORK/cp.err" ||
  fail "cannot hard-link /usr and /etc into $image (/var/tmp must be on /usr's filesystem): $(head -n 3 "$WORK/cp.err")"
for d in bin sbin lib lib32 lib64 libx32; do
  if [[ -L /$d ]]; then cp -a "/$d" "$image/"          # merged /usr: the links
  elif [[ -d /$d ]]; then cp -al "/$d" "$image/"; fi
done
mkdir -p "$image"/{proc,sys,dev,tmp,var/tmp,root,home,run,opt/ddp-test}
# What only the image has: the script, the example it uses, a marker of this run.
marker=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
echo "$marker" >"$image/opt/ddp-test/marker"
[[ ! -e /opt/ddp-test ]] || fail "/opt/ddp-test exists outside the image; the test needs it only inside"
cp "$DDP_SOURCE_DIR/examples/train_fashion_mnist.py" "$image/opt/ddp-test/"
cat >"$image/opt/ddp-test/train.py" <<'EOF'
"""DDP training inside the container (tests/integration/apptainer.sh): the
example's data and model, a bounded number of steps, and one report per rank."""
import hashlib
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from train_fashion_mnist import load

steps = int(sys.argv[1])
marker = open("/opt/ddp-test/marker").read().strip()
dist.init_process_group(backend="gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
data = "/usr/share/datasets/fashion-mnist"
train, test = load("train", data), load("t10k", data)
sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=0)
loader = DataLoader(train, batch_size=128 // world, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
losses = []
model.train()
for x, y in loader:
    if len(losses) == steps:
        break
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
# Mean loss of the first and the last 20 steps, over all ranks; test accuracy
# on the whole test split, each rank scoring its share.
stats = torch.tensor([sum(losses[:20]) / 20, sum(losses[-20:]) / 20, 0.0, 0.0], dtype=torch.float64)
model.eval()
with torch.no_grad():
    xs, ys = test.tensors
    idx = torch.arange(rank, len(xs), world)
    stats[2] = (model(xs[idx]).argmax(1) == ys[idx]).sum().item()
    stats[3] = len(idx)
dist.all_reduce(stats)
digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()[:16]
print(
    f"rank={rank} world={world} group_rank={os.environ['GROUP_RANK']} local_rank={os.environ['LOCAL_RANK']}"
    f" container={os.environ.get('APPTAINER_CONTAINER', '-')} marker={marker} steps={len(losses)}"
    f" loss={stats[0] / world:.4f}->{stats[1] / world:.4f} accuracy={stats[2] / stats[3]:.4f} params={digest}",
    flush=True,
)
dist.destroy_process_group()
EOF
flags=(--contain --no-privs)

# Apptainer on its own first, so that a machine it cannot run on says why here.
run apptainer exec "${flags[@]}" "$image" cat /opt/ddp-test/marker
expect_rc 0 "apptainer exec ${flags[*]} $image outside Slurm"
expect_eq "$OUT" "$marker" "the image's marker, outside Slurm"

# --- training: 4 ranks on 2 nodes, each in a container ------------------------
steps=250
run srun -N2 --ddp=cpu --ddp-procs=2 apptainer exec "${flags[@]}" "$image" python3 /opt/ddp-test/train.py $steps
expect_rc 0 "srun --ddp apptainer exec ... train.py"
lines=$(grep '^rank=' <<<"$OUT" | sort)
expect_eq "$(wc -l <<<"$lines")" "4" "four ranks reported"
for r in 0 1 2 3; do
  line=$(grep "^rank=$r " <<<"$lines") || { show srun; fail "rank $r missing"; }
  expect_in "$line" "world=4 group_rank=$((r / 2)) local_rank=$((r % 2)) " "rank $r layout"
  expect_in "$line" " container=$image marker=$marker " "rank $r ran in the container of this run's image"
  expect_in "$line" " steps=$steps " "rank $r trained $steps steps"
done
# The same averaged loss, accuracy and (bit for bit) parameters on every rank.
expect_eq "$(sed 's/^rank=[0-9]* //; s/ group_rank=.* loss=/ loss=/' <<<"$lines" | sort -u | wc -l)" "1" "the ranks agree"
line=$(grep '^rank=0 ' <<<"$lines")
acc=$(sed -n 's/.* accuracy=\([0-9.]*\).*/\1/p' <<<"$line")
read -r first last < <(sed -n 's/.* loss=\([0-9.]*\)->\([0-9.]*\) .*/\1 \2/p' <<<"$line")
# 250 steps of SGD (about half an epoch) reach about 0.80 here; 0.72 leaves
# room for other BLAS builds and still fails when training never happened.
awk -v a="$acc" 'BEGIN { exit !(a >= 0.72) }' || fail "test accuracy $acc after $steps steps, expected >= 0.72"
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.6 * f) }' ||
  fail "loss went from $first to $last, expected it to fall below 60%"

# --- a worker failing inside its container ------------------------------------
# Rank 2 (node 1) exits 3; the others would sleep 60 s. srun must end soon with
# 3 and the root cause, and leave no container process behind on any node.
start=$SECONDS
run srun -N2 --ddp=cpu --ddp-procs=2 apptainer exec "${flags[@]}" "$image" sh -c \
  'if [ "$RANK" = 2 ]; then echo "rank 2 fails in $APPTAINER_CONTAINER" >&2; exit 3; fi; exec sleep 60'
elapsed=$((SECONDS - start))
expect_rc 3 "rank 2 exits 3 inside the container"
expect_in "$ERR" "root cause: worker rank 2 (local rank 0) on node 1" "root cause names the rank"
expect_in "$ERR" "rank 2 fails in $image" "the worker's stderr from inside the container"
expect_eq "$(grep -c 'root cause:' <<<"$ERR")" "1" "one root cause for the job"
((elapsed < 30)) || fail "srun took $elapsed s after rank 2 failed; the others' containers were not stopped"
expect_eq "$(node_processes 'sleep 60' | wc -l)" "0" "no container process left on any node"
pass "4 ranks on 2 nodes trained in apptainer containers of $image ($steps steps, loss $first -> $last," \
  "accuracy $acc, same parameters everywhere); a failure inside names its root cause (rc 3, ${elapsed} s)"
