"""Restart-and-resume in the seeds' style: rank 0 snapshots the model every
step; worker rank 3 dies once, at step 5 of attempt 0; after the agents restart
every worker together, all of them resume from the newest snapshot.

    resume.py SNAPSHOT_DIR

RESUME_STEPS (default 10) and RESUME_STEP_SECONDS (default 0: a pause per
step) make a longer run; RESUME_CRASH=0 leaves out the crash (a node loss in
tests/integration/spares.sh and min_nodes.sh is the failure there).
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = int(os.environ.get("RESUME_STEPS", "10"))
STEP_SECONDS = float(os.environ.get("RESUME_STEP_SECONDS", "0"))
CRASH = os.environ.get("RESUME_CRASH", "1") == "1"


def main() -> int:
    snap_dir = sys.argv[1]
    snap = os.path.join(snap_dir, "snapshot.pt")
    restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    dist.init_process_group(backend="gloo", init_method="env://")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    start, resumed = 0, "none"
    if os.path.exists(snap):
        state = torch.load(snap)
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start, resumed = state["step"] + 1, str(state["step"])
    sys.stdout.write(f"attempt={restart} restart_count={restart} resumed_from={resumed} "
                     f"port={os.environ['MASTER_PORT']} rank={rank} world={dist.get_world_size()} "
                     f"node={os.environ.get('SLURMD_NODENAME', '?')}\n")
    sys.stdout.flush()
    gen = torch.Generator().manual_seed(rank)
    for step in range(start, STEPS):
        x = torch.randn(8, 4, generator=gen)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:  # write-then-rename: a crash never leaves half a snapshot
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step}, snap + ".tmp")
            os.replace(snap + ".tmp", snap)
        dist.barrier()
        time.sleep(STEP_SECONDS)
        if CRASH and step == 5 and restart == 0 and rank == 3:
            sys.stderr.write("simulated failure at step 5\n")
            sys.stderr.flush()
            # A crash, not a clean exit: sys.exit() would first tear the process
            # group down, and a peer that sees the closed socket can fail and
            # exit before this worker does (slow teardowns, e.g. under ASan).
            os._exit(3)
    sys.stdout.write(f"final step={STEPS} rank={rank}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
