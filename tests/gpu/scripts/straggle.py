"""A GPU straggler for slurm-rows.sh's slurm-6: every rank multiplies
matrices and all-reduces 64 MiB each step for SECONDS seconds, rank SLOW
doing TIMES times the others' multiplications, written the way a PyTorch
script is (nothing of slurm-ddp in it). Prints "straggle: rank R steps N".

usage: straggle.py SECONDS SLOW TIMES
"""
import os
import sys
import time

import torch
import torch.distributed as dist

seconds, slow, times = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
a = torch.randn(4096, 4096, device="cuda")
grad = torch.ones(16 << 20, device="cuda")
work = 4 * (times if rank == slow else 1)
end, steps = time.time() + seconds, 0
while True:
    for _ in range(work):
        b = a @ a
    dist.all_reduce(grad)
    steps += 1
    go = torch.tensor([1 if time.time() < end else 0], device="cuda")
    dist.broadcast(go, 0)  # rank 0's clock says when every rank stops
    if not go.item():
        break
print(f"straggle: rank {rank} steps {steps}", flush=True)
dist.destroy_process_group()
