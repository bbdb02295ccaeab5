"""Data-parallel training on GPUs with NCCL, one worker per GPU: a PyTorch
script written for torchrun, which slurm-ddp runs unmodified.

    sbatch examples/train-gpu.sbatch                      # 2 nodes x 4 GPUs
    srun -N2 --gpus-per-node=4 --ddp /usr/bin/python3 examples/train_gpu.py --checkpoint-dir /scratch/$USER/run1

Without CUDA (a step without GPUs, or a torch built without it) the same code
runs on the CPU with the Gloo backend, one process per --ddp-procs; the
tests run it so on the local cluster (tests/integration/train_gpu_cpu.sh):

    srun -N2 --ddp=cpu --ddp-procs=2 /usr/bin/python3 examples/train_gpu.py --steps 50

What it shows, each where the code does it:
- torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
  MASTER_PORT) read by init_process_group's env:// and LOCAL_RANK picking
  the GPU;
- DistributedDataParallel and a DistributedSampler (each rank its share);
- a checkpoint that rank 0 writes (atomically) and every rank resumes from
  when the job runs again (a requeue, --ddp-restarts, a new job);
- DDP_PROGRESS_FILE, given with --ddp-hang-timeout: the step number written
  each step, so a hang is named (doc/failures.md, Hangs);
- SIGUSR1 (sbatch --signal=USR1@SECONDS, forwarded to every worker): the
  ranks save together at the end of a step, and end when DDP_REQUEUE=1
  (--ddp-requeue puts the job back in the queue; doc/failures.md);
- destroy_process_group at the end, also after an exception.

The data are synthetic (a fixed random linear map plus noise), so it needs
nothing but torch; put your dataset and model in their place.
"""
import argparse
import os
import pathlib
import signal
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

# How many SIGUSR1 this worker got: counted by the handler, acted on at the
# end of a step (a handler runs wherever the main thread is).
usr1_count = 0


def on_usr1(signum, frame):
    global usr1_count
    usr1_count += 1


def device_and_backend():
    """cuda:LOCAL_RANK and NCCL on a GPU node; the CPU and Gloo without CUDA."""
    if not torch.cuda.is_available():
        return torch.device("cpu"), "gloo"
    local_rank = int(os.environ["LOCAL_RANK"])
    # CUDA_VISIBLE_DEVICES lists the step's GPUs on this node and worker
    # LOCAL_RANK takes the one at that index; a worker that sees only its own
    # GPU (SDDP_ONE_GPU_PER_WORKER=1) takes cuda:0.
    index = local_rank if torch.cuda.device_count() > 1 else 0
    torch.cuda.set_device(index)
    return torch.device("cuda", index), "nccl"


def synthetic_data(samples, features):
    """The same data on every rank (seeded): y = x @ w + noise."""
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, features, generator=gen)
    w = torch.randn(features, 1, generator=gen)
    return TensorDataset(x, x @ w + 0.01 * torch.randn(samples, 1, generator=gen))


def load_checkpoint(path, model, optimizer, device):
    """The step to start from: 0, or the one after the checkpoint's."""
    if path is None or not path.exists():
        return 0
    state = torch.load(path, map_location=device)
    model.module.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"] + 1


def save_checkpoint(path, model, optimizer, step):
    """Rank 0 writes it, to a temporary file renamed into place: a job killed
    mid-write leaves the previous checkpoint whole."""
    if path is None or dist.get_rank() != 0:
        return
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, tmp)
    os.replace(tmp, path)


def train(args, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial model on every run (DDP copies rank 0's to the others)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device),
                device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    checkpoint = pathlib.Path(args.checkpoint_dir, "checkpoint.pt") if args.checkpoint_dir else None
    if checkpoint and rank == 0:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
    start = load_checkpoint(checkpoint, model, optimizer, device)
    if start and rank == 0:
        print(f"resumed from {checkpoint} at step {start}", flush=True)

    data = synthetic_data(4096, 32)
    sampler = DistributedSampler(data, shuffle=True, seed=0)  # each rank its share
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    progress = os.environ.get("DDP_PROGRESS_FILE")  # None without --ddp-hang-timeout
    # A resumed run goes on with the epoch it stopped in (its shuffle), from its start.
    step, epoch, loss = start, start // len(loader), torch.zeros(())
    usr1_handled = 0  # signals the ranks have saved for
    while step < args.steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            if step >= args.steps:
                break
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()  # DDP averages the gradients over the ranks here
            optimizer.step()
            if progress:
                pathlib.Path(progress).write_text(str(step))
            if rank == 0 and (step % args.log_every == 0 or step == args.steps - 1):
                print(f"step {step}/{args.steps} loss {loss.item():.4f}", flush=True)
            # The ranks get a signal at different moments, a step apart at times:
            # the most any rank has counted (a one-number all-reduce a step) tells
            # all of them at once that a new one came, so they save the same step,
            # once per signal, and end together.
            seen = torch.tensor([float(usr1_count)], device=device)
            dist.all_reduce(seen, op=dist.ReduceOp.MAX)
            if seen.item() > usr1_handled:
                usr1_handled = int(seen.item())
                save_checkpoint(checkpoint, model, optimizer, step)
                if rank == 0:
                    print(f"SIGUSR1: saved step {step}", flush=True)
                if os.environ.get("DDP_REQUEUE") == "1":  # the job goes back to the queue
                    return step
            if args.checkpoint_every and (step + 1) % args.checkpoint_every == 0:
                save_checkpoint(checkpoint, model, optimizer, step)
            step += 1
        epoch += 1
    save_checkpoint(checkpoint, model, optimizer, step - 1)
    if rank == 0:
        print(f"done: {step} steps, loss {loss.item():.4f}, {world} ranks, backend {dist.get_backend()}, "
              f"device {device.type}", flush=True)
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500, help="optimizer steps in all (default 500)")
    parser.add_argument("--batch-size", type=int, default=64, help="per rank (default 64)")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--checkpoint-dir", help="where checkpoint.pt is kept; resumed from if there")
    parser.add_argument("--checkpoint-every", type=int, default=100, help="steps between checkpoints (0: only at "
                        "the end and on SIGUSR1)")
    parser.add_argument("--log-every", type=int, default=50)
    args = parser.parse_args()

    signal.signal(signal.SIGUSR1, on_usr1)  # before training: USR1's default action ends the process
    device, backend = device_and_backend()
    dist.init_process_group(backend=backend, init_method="env://")
    try:
        train(args, device)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
