#!/usr/bin/python3
"""The peer for bench/trainer.sh: PyTorch DDP (Gloo) training the same models
as ddp-train on the same data with the same global batch, sampler and
optimizer, printing the same final JSON record. Started by a launcher
(ddp-agent, torchrun), one process per rank; --threads sets torch's threads.

Batches are gathered from in-memory tensors (no DataLoader) so the peer pays
no data-loading overhead that ddp-train does not pay either."""
import argparse, gzip, json, os, struct, time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "ae"], default="mlp")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128, help="global batch")
    p.add_argument("--lr", type=float)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    xtr = read_idx(f"{a.data}/train-images-idx3-ubyte.gz").reshape(-1, 784).float() / 255
    ytr = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz").long()
    xte = read_idx(f"{a.data}/t10k-images-idx3-ubyte.gz").reshape(-1, 784).float() / 255
    yte = read_idx(f"{a.data}/t10k-labels-idx1-ubyte.gz").long()
    if a.model == "mlp":
        net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
        loss_fn = nn.CrossEntropyLoss()
        opt_of = lambda params: torch.optim.SGD(params, lr=a.lr or 0.05, momentum=0.9)
    else:
        net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 128),
                            nn.ReLU(), nn.Linear(128, 784))
        loss_fn = nn.MSELoss()
        opt_of = lambda params: torch.optim.Adam(params, lr=a.lr or 1e-3)
    model = DDP(net)
    opt = opt_of(model.parameters())
    local = a.batch_size // world
    sampler = DistributedSampler(range(len(xtr)), num_replicas=world, rank=rank, shuffle=True, seed=0)
    train_seconds, samples, last_loss = 0.0, 0, float("nan")
    for epoch in range(a.epochs):
        sampler.set_epoch(epoch)
        idx = torch.tensor(list(iter(sampler)))
        t0 = time.perf_counter()
        total, steps = 0.0, 0
        for start in range(0, len(idx), local):
            b = idx[start:start + local]
            x = xtr[b]
            out = model(x)
            loss = loss_fn(out, ytr[b] if a.model == "mlp" else x)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
            samples += len(b) * world
        train_seconds += time.perf_counter() - t0
        last_loss = total / steps
    with torch.no_grad():
        mine = torch.arange(rank, len(xte), world)
        out = net(xte[mine])
        metric = torch.tensor([(out.argmax(1) == yte[mine]).sum().item() if a.model == "mlp"
                               else ((out - xte[mine]) ** 2).sum().item(), float(len(mine))], dtype=torch.float64)
    dist.all_reduce(metric)
    record = {"event": "final", "world_size": world, "epochs": a.epochs, "train_seconds": train_seconds,
              "samples_per_second": samples / train_seconds, "final_train_loss": last_loss}
    if a.model == "mlp":
        record["test_accuracy"] = metric[0].item() / metric[1].item()
    else:
        record["test_mse"] = metric[0].item() / (metric[1].item() * 784)
    if rank == 0:
        print(json.dumps(record), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
