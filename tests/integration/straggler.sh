#!/usr/bin/env bash
# A node throttled mid-run is named as a straggler, with no change to the
# script, and swapped for the spare: an unmodified PyTorch DDP loop (Gloo) on
# 2 nodes and a spare; after 45 s of healthy training (6 windows of warm-up
# and at least two judged: no verdict) node 1's worker goes into a cpu
# cgroup capped at 15% of a CPU (v1
# or v2, whichever the machine has). Node 0 must name node 1, with its
# figures and a JSON event line, within 60 s; with --ddp-stragglers=swap the
# spare takes node 1's ranks, every worker restarts, and the run ends well.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
script="$WORK/train.py"
cat >"$script" <<'PY'
import os, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(256, 256), torch.randint(0, 10, (256,))
print(f"ready rank={dist.get_rank()} pid={os.getpid()}", flush=True)
restarted = int(os.environ["TORCHELASTIC_RESTART_COUNT"]) > 0
end = time.time() + (5 if restarted else float(sys.argv[1]))
step = 0
while True:
    stop = torch.tensor([float(time.time() > end)])  # every rank stops at the same step
    dist.all_reduce(stop, op=dist.ReduceOp.MAX)
    if stop.item() > 0:
        break
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    step += 1
print(f"done rank={dist.get_rank()} steps={step} restarted={restarted}", flush=True)
PY

cg=$(cgroup_make cpu "ddp-test-straggler-$$")
trap 'cgroup_drop "$cg"; cleanup_work' EXIT
cgroup_limit "$cg" cpu 15

bg_srun train -N3 -k --ddp=cpu --ddp-verbose --ddp-spares=1 --ddp-restarts=1 --ddp-stragglers=swap \
  "$PYTHON" -u "$script" 150
wait_lines "$WORK/train.out" "ready rank=" 2 90
wait_lines "$WORK/train.err" "busiest rank per node" 8 60  # --ddp-verbose: one line per window
OUT=$(cat "$WORK/train.out") ERR=$(cat "$WORK/train.err") RC=running
expect_not_in "$ERR" "straggler" "no straggler named in 8 windows of healthy training"
victim=$(sed -n 's/.*ready rank=1 pid=\([0-9]*\).*/\1/p' "$WORK/train.out")
[[ -n $victim ]] || fail "no pid for rank 1"
cgroup_put "$cg" "$victim"
throttled_at=$SECONDS
named=""
while ((SECONDS - throttled_at < 60)); do
  named=$(grep "straggler: node 1" "$WORK/train.err" || true)
  [[ -n $named ]] && break
  sleep 1
done
took=$((SECONDS - throttled_at))
[[ -n $named ]] || { cat "$WORK/train.err" >&2; fail "node 1, throttled to 15% of a CPU, was not named within 60 s"; }
echo "named after ${took} s: $named"
wait_exit "$BG_PID" 90
OUT=$(cat "$WORK/train.out") ERR=$(cat "$WORK/train.err")
expect_rc 0 "the run, with the spare in node 1's place"
expect_in "$named" "straggler: node 1 (" "the throttled node is named"
expect_in "$named" "its rank 1 was busy" "with its rank and figures"
expect_in "$named" "its cpu cgroup was throttled" "and the quota that throttles it"
expect_in "$ERR" 'event: {"event":"straggler","attempt":0,"node":1,' "a machine-readable line"
expect_eq "$(grep -c 'straggler: node' <<<"$ERR")" "1" "one straggler named, once"
expect_in "$ERR" "is unhealthy, taken out of the step: a straggler (--ddp-stragglers=swap)" "swap takes it out"
expect_in "$ERR" "spare node 2 (" "the spare takes its place"
expect_eq "$(grep -c 'done rank=[01] steps=[0-9]* restarted=True' <<<"$OUT")" "2" "both ranks ran again and ended well"
pass "a node throttled mid-run named as a straggler within ${took} s and swapped for the spare; none while healthy"
