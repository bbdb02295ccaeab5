"""An Accelerate script written as Accelerate's documentation shows (an
Accelerator, prepare(), accelerator.backward()), nothing slurm-ddp specific:
tests/gpu/slurm-rows.sh runs it unmodified under `srun --ddp`, which gives it
torchrun's variables. One epoch of a small classifier on synthetic data.
"""
import argparse

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    accelerator = Accelerator(cpu=args.cpu)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2048, 32, generator=generator)
    y = x[:, :4].argmax(dim=1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    steps = 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        accelerator.backward(loss)
        optimizer.step()
        steps += 1
    total = accelerator.reduce(torch.tensor([steps], device=accelerator.device), reduction="sum")
    print(f"accelerate: rank {accelerator.process_index} of {accelerator.num_processes}, "
          f"{accelerator.distributed_type}, {accelerator.device}, steps {steps}, all ranks {int(total.item())}",
          flush=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
