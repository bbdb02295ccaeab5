"""A PyTorch Lightning 2.x script written as Lightning's documentation shows
for torchrun (Trainer(accelerator, devices, num_nodes, strategy="ddp")),
nothing slurm-ddp specific: tests/gpu/slurm-rows.sh runs it unmodified under
`srun --ddp`. One epoch of a small classifier on synthetic data.
"""
import argparse

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--num-nodes", type=int, default=1)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2048, 32, generator=generator)
    y = (x[:, :4].argmax(dim=1))
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    trainer = L.Trainer(accelerator=args.accelerator, devices=args.devices, num_nodes=args.num_nodes,
                        strategy="ddp", max_epochs=1, enable_progress_bar=False, enable_checkpointing=False,
                        logger=False)
    trainer.fit(Classifier(), loader)
    print(f"lightning: rank {trainer.global_rank} of {trainer.world_size}, node {trainer.node_rank}, "
          f"{trainer.strategy.root_device}, env {type(trainer.strategy.cluster_environment).__name__}, "
          f"epochs {trainer.current_epoch}", flush=True)


if __name__ == "__main__":
    main()
