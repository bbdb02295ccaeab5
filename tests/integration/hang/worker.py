"""A worker for hang.sh: a loop of all-reduces that touches DDP_PROGRESS_FILE
each step, as a training loop would; rank HANG_RANK (default 2) falls asleep
at step 20 inside the loop, so every other rank waits in an all-reduce it
never joins. With the faulthandler (PYTHONFAULTHANDLER, set by the agent),
SIGABRT prints each rank's stack: rank 2's names fall_asleep."""
import os
import pathlib
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
progress = pathlib.Path(os.environ["DDP_PROGRESS_FILE"])
hang_rank = int(os.environ.get("HANG_RANK", "2"))


def fall_asleep(step):
    print(f"rank {rank} falls asleep at step {step} at {time.time():.3f}", flush=True)
    time.sleep(3600)


t = torch.ones(4)
for step in range(100000):
    progress.touch()  # the progress signal: one line, nothing of ours imported
    if rank == hang_rank and step == 20:
        fall_asleep(step)
    dist.all_reduce(t)
    t.fill_(1.0)
    time.sleep(0.05)
