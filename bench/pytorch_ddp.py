#!/usr/bin/python3
"""The peer for bench/train_bench.py (and the GPU kit): PyTorch DDP (Gloo) training the same models
as ddp-train on the same data with the same global batch, sampler and
optimizer, printing the same final JSON record. Started by a launcher
(ddp-agent, torchrun), one process per rank; --threads sets torch's threads.

Batches are gathered from in-memory tensors (no DataLoader) so the peer pays
no data-loading overhead that ddp-train does not pay either.

What a competent user would turn on, each its own flag so the benchmark can
show it as a row: --foreach (the optimizers' multi-tensor path; on the CPU
PyTorch's default is the per-parameter loop), --compile (torch.compile of the
DDP model, PyTorch 2), --channels-last (the CNN in NHWC, oneDNN's preferred
layout), --bucket-view (DDP's gradients kept in its buckets). The benchmark
also runs it with ATEN_CPU_CAPABILITY=avx512 where the CPU has AVX-512
(PyTorch picks AVX2 kernels by default). Started without a launcher (no
WORLD_SIZE) it trains in one process with --threads threads and no process
group: the row a user with one node runs.

The final record holds the whole run's samples/s and the steady state's
(epochs 2 to E; epoch 1 also pays for warm-up: torch.compile, the allocator,
the connections' first transfers).

--device cuda runs the same on GPUs with NCCL: rank r on cuda:LOCAL_RANK, or
on cuda:0 when only one GPU is visible (then --distinct-hostid lets several
ranks share it). Data, model and the running loss stay on the GPU; the host
waits for it once per epoch."""
import argparse, copy, gzip, json, os, struct, time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


class MnistNet(nn.Module):
    """examples/mnist/main.py's Net, as ddp-train --model cnn computes it."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "ae", "cnn"], default="mlp")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128, help="global batch")
    p.add_argument("--lr", type=float)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="initialisation and shuffling")
    p.add_argument("--limit-train", type=int, default=0, metavar="N", help="use only the first N training rows")
    p.add_argument("--foreach", action="store_true", help="the optimizer's multi-tensor (foreach) implementation")
    p.add_argument("--compile", action="store_true", help="torch.compile the (DDP) model; PyTorch 2 and later")
    p.add_argument("--compile-mode", choices=["default", "reduce-overhead", "max-autotune"], default="default",
                   help="torch.compile's mode; reduce-overhead: CUDA graphs on the GPU (against ddp-train --cuda-graph)")
    p.add_argument("--channels-last", action="store_true", help="cnn: the model and images in channels_last")
    p.add_argument("--bucket-view", action="store_true",
                   help="DDP(gradient_as_bucket_view=True): gradients live in the buckets, no copy in and out")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cpu: Gloo (default); cuda: NCCL, cuda:LOCAL_RANK, or cuda:0 if only one GPU is visible")
    p.add_argument("--distinct-hostid", action="store_true",
                   help="cuda only: set NCCL_HOSTID=ddp-kit-LOCAL_RANK so ranks sharing one GPU look like separate "
                        "hosts to NCCL (it then uses its socket transport between them)")
    p.add_argument("--warmup-steps", type=int, default=0, metavar="K",
                   help="run K untimed training steps before epoch 1 on a deep copy of the model and a fresh "
                        "optimizer, then discard them: the timed training starts from the same parameters and "
                        "optimizer state as without warm-up (it only warms kernels, allocator and NCCL)")
    a = p.parse_args()
    if a.distinct_hostid and a.device != "cuda":
        p.error("--distinct-hostid only applies to --device cuda")
    if a.warmup_steps < 0:
        p.error("--warmup-steps must be >= 0")
    if a.compile and not hasattr(torch, "compile"):
        p.error(f"--compile needs PyTorch 2 or later (this is {torch.__version__})")
    if a.compile_mode != "default" and not a.compile:
        p.error("--compile-mode needs --compile")
    if a.channels_last and a.model != "cnn":
        p.error("--channels-last only applies to --model cnn")
    cuda = a.device == "cuda"
    torch.set_num_threads(a.threads)
    # As ddp-train does (trainer/model/cpu_ops.cpp): subnormal floats flushed
    # to zero on the CPU, so neither side pays for them (with them the
    # autoencoder's later epochs run several times slower).
    torch.set_flush_denormal(True)
    if cuda:
        if not torch.cuda.is_available():
            raise SystemExit("pytorch_ddp.py: --device cuda but torch sees no GPU; check nvidia-smi, "
                             "CUDA_VISIBLE_DEVICES and that torch is a CUDA build")
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        dev = torch.device("cuda", 0 if torch.cuda.device_count() == 1 else local_rank)
        torch.cuda.set_device(dev)
        if a.distinct_hostid:
            os.environ["NCCL_HOSTID"] = f"ddp-kit-{local_rank}"
        dist.init_process_group("nccl")
    elif "WORLD_SIZE" in os.environ:
        dev = torch.device("cpu")
        dist.init_process_group("gloo")
    else:
        dev = torch.device("cpu")
    distributed = dist.is_initialized()
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    torch.manual_seed(a.seed)
    shape = (-1, 1, 28, 28) if a.model == "cnn" else (-1, 784)
    xtr = (read_idx(f"{a.data}/train-images-idx3-ubyte.gz").reshape(shape).float() / 255).to(dev)
    ytr = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz").long().to(dev)
    if a.limit_train:
        xtr, ytr = xtr[:a.limit_train], ytr[:a.limit_train]
    xte = (read_idx(f"{a.data}/t10k-images-idx3-ubyte.gz").reshape(shape).float() / 255).to(dev)
    yte = read_idx(f"{a.data}/t10k-labels-idx1-ubyte.gz").long().to(dev)
    classify = a.model in ("mlp", "cnn")
    schedule = None
    if a.model == "mlp":
        net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
        loss_fn = nn.CrossEntropyLoss()
        opt_of = lambda params: torch.optim.SGD(params, lr=a.lr or 0.05, momentum=0.9, foreach=a.foreach)
    elif a.model == "cnn":
        # PyTorch's examples/mnist/main.py: Net, Adadelta at 1.0, StepLR(step_size=1, gamma=0.7).
        net = MnistNet()
        loss_fn = lambda out, y: F.nll_loss(out, y)
        opt_of = lambda params: torch.optim.Adadelta(params, lr=a.lr or 1.0, foreach=a.foreach)
        schedule = lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    else:
        net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 128),
                            nn.ReLU(), nn.Linear(128, 784))
        loss_fn = nn.MSELoss()
        opt_of = lambda params: torch.optim.Adam(params, lr=a.lr or 1e-3, foreach=a.foreach)
    net = net.to(dev)
    if a.channels_last:
        net = net.to(memory_format=torch.channels_last)
        xtr = xtr.contiguous(memory_format=torch.channels_last)
        xte = xte.contiguous(memory_format=torch.channels_last)
    ddp_options = {"gradient_as_bucket_view": True} if a.bucket_view else {}
    ddp = (lambda m: DDP(m, device_ids=[dev], **ddp_options)) if cuda else (lambda m: DDP(m, **ddp_options))
    wrap = ddp if distributed else (lambda m: m)
    if a.compile:
        wrap = (lambda w: lambda m: torch.compile(w(m), mode=a.compile_mode))(wrap)
    warm_net = copy.deepcopy(net) if a.warmup_steps else None  # copied before DDP touches net
    model = wrap(net)
    opt = opt_of(model.parameters())
    scheduler = schedule(opt) if schedule else None
    local = a.batch_size // world
    sampler = DistributedSampler(range(len(xtr)), num_replicas=world, rank=rank, shuffle=True, seed=a.seed)

    def epoch_indices(epoch):
        sampler.set_epoch(epoch)
        return torch.tensor(list(iter(sampler)), device=dev)

    def train_step(model, opt, b):
        x = xtr[b]
        out = model(x)
        loss = loss_fn(out, ytr[b] if classify else x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    def sync():
        if cuda:
            torch.cuda.synchronize()

    if a.warmup_steps:
        # Neither the copy nor its optimizer is used again, and the sampler
        # draws from its own generator: the timed run is unaffected.
        warm_model = wrap(warm_net)
        warm_opt = opt_of(warm_model.parameters())
        idx = epoch_indices(0)
        starts = range(0, len(idx), local)
        for k in range(a.warmup_steps):
            start = starts[k % len(starts)]
            train_step(warm_model, warm_opt, idx[start:start + local])
        sync()
        del warm_model, warm_opt, warm_net

    train_seconds, samples, last_loss, epoch_rates, epoch_seconds_all = 0.0, 0, float("nan"), [], []
    for epoch in range(a.epochs):
        idx = epoch_indices(epoch)
        sync()
        t0 = time.perf_counter()
        # float64 either way; on the GPU a tensor, so the loop never waits for it
        total, steps = torch.zeros((), dtype=torch.float64, device=dev) if cuda else 0.0, 0
        for start in range(0, len(idx), local):
            b = idx[start:start + local]
            loss = train_step(model, opt, b)
            total += loss.detach() if cuda else loss.item()
            steps += 1
            samples += len(b) * world
        sync()
        epoch_seconds = time.perf_counter() - t0
        train_seconds += epoch_seconds
        epoch_rates.append(len(idx) * world / epoch_seconds)
        epoch_seconds_all.append(epoch_seconds)
        last_loss = float(total) / steps
        if scheduler:
            scheduler.step()
    net.eval()  # the CNN's dropout off
    with torch.no_grad():
        mine = torch.arange(rank, len(xte), world, device=dev)
        out = torch.cat([net(xte[mine[i:i + 500]]) for i in range(0, len(mine), 500)])
        metric = torch.tensor([(out.argmax(1) == yte[mine]).sum().item() if classify
                               else ((out - xte[mine]) ** 2).sum().item(), float(len(mine))], dtype=torch.float64,
                              device=dev)
    if distributed:
        dist.all_reduce(metric)
    record = {"event": "final", "world_size": world, "epochs": a.epochs, "train_seconds": train_seconds,
              "samples_per_second": samples / train_seconds, "final_train_loss": last_loss,
              "epoch_samples_per_second": epoch_rates, "epoch_seconds": epoch_seconds_all}
    if a.epochs >= 2:
        steady = epoch_seconds_all[1:]
        record["steady_samples_per_second"] = sum(r * t for r, t in zip(epoch_rates[1:], steady)) / sum(steady)
    if classify:
        record["test_accuracy"] = metric[0].item() / metric[1].item()
    else:
        record["test_mse"] = metric[0].item() / (metric[1].item() * 784)
    if cuda:
        record["device"] = str(dev)
    if rank == 0:
        print(json.dumps(record), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
