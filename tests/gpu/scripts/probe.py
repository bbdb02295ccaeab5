"""What a worker under `srun --ddp` got, and one all-reduce over its backend.

Run by tests/gpu/slurm-rows.sh, one process per worker. Prints one line
"probe: key=value ..." per rank: its ranks, MASTER_ADDR/PORT, the GPU it was
given (CUDA_VISIBLE_DEVICES, cuda:LOCAL_RANK, the GPU's PCI bus id), the CPUs
it may run on, and the sum of (RANK + 1) over every rank. Exit 0 only when the
sum is right.
"""
import os
import subprocess
import sys

import torch
import torch.distributed as dist

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
env = os.environ
rank, world, local_rank = int(env["RANK"]), int(env["WORLD_SIZE"]), int(env["LOCAL_RANK"])


def bus_id(index):
    """The PCI bus id of cuda:index, as torch or else nvidia-smi reports it."""
    props = torch.cuda.get_device_properties(index)
    if hasattr(props, "pci_bus_id"):
        return f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    visible = env.get("CUDA_VISIBLE_DEVICES", str(index)).split(",")[index]
    out = subprocess.run(["nvidia-smi", "-i", visible, "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


fields = {
    "rank": rank, "world": world, "local_rank": local_rank, "node": env.get("GROUP_RANK"),
    "master": f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}",
    "cpus": ",".join(str(c) for c in sorted(os.sched_getaffinity(0))),
    "omp": env.get("OMP_NUM_THREADS"), "ifname": env.get("NCCL_SOCKET_IFNAME"),
    "hostid": env.get("NCCL_HOSTID", "-"),
}
if device == "cuda":
    torch.cuda.set_device(local_rank)
    fields.update(visible=env.get("CUDA_VISIBLE_DEVICES"), gpu=torch.cuda.get_device_name(local_rank).replace(" ", "_"),
                  bus=bus_id(local_rank))
dist.init_process_group("nccl" if device == "cuda" else "gloo")
value = torch.tensor([float(rank + 1)], device=f"cuda:{local_rank}" if device == "cuda" else "cpu")
dist.all_reduce(value)
fields.update(backend=dist.get_backend(), allreduce=int(value.item()))
print("probe: " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)
dist.destroy_process_group()
sys.exit(0 if int(value.item()) == world * (world + 1) // 2 else 1)
