"""Data-parallel training of a small MLP on Fashion-MNIST with PyTorch DDP.

A script written for torchrun, unmodified: it reads RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT through init_method="env://". Under slurm-ddp:

    srun -N2 --ddp=cpu --ddp-procs=2 /usr/bin/python3 examples/train_fashion_mnist.py

Data: Debian's dataset-fashion-mnist (IDX files, gzip) in /usr/share/datasets.
"""
import argparse
import gzip
import os
import struct
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def read_idx(path: str) -> torch.Tensor:
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    shape = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim :]), dtype=torch.uint8).reshape(shape)


def load(split: str, root: str) -> TensorDataset:
    images = read_idx(os.path.join(root, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(root, f"{split}-labels-idx1-ubyte.gz"))
    x = images.reshape(len(images), -1).float().div_(255.0)
    return TensorDataset(x, labels.long())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--global-batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    args = p.parse_args()

    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)

    train, test = load("train", args.data), load("t10k", args.data)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=args.global_batch // world, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    start = time.time()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        # Evaluate on this rank's share of the test split, then sum over ranks.
        model.eval()
        correct = torch.zeros(2)
        with torch.no_grad():
            xs, ys = test.tensors
            idx = torch.arange(rank, len(xs), world)
            correct[0] = (model(xs[idx]).argmax(1) == ys[idx]).sum()
            correct[1] = len(idx)
        dist.all_reduce(correct)
        if rank == 0:
            samples = (epoch + 1) * len(sampler) * world
            print(
                f"epoch {epoch + 1}/{args.epochs}: test accuracy {correct[0] / correct[1]:.4f} "
                f"({world} ranks, {samples / (time.time() - start):.0f} samples/s)",
                flush=True,
            )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
