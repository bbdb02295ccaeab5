"""A plain torch.distributed program, exactly as one would write it for torchrun:
env:// initialisation, Gloo backend, one all_reduce. Prints one line per rank:

    rank=R local_rank=L world=W group_rank=G master=ADDR:PORT sum=S expected=E

Run it with `srun -N2 --ddp=cpu --ddp-procs=2 /usr/bin/python3 examples/allreduce.py`
or `ddp-agent --nproc 2 -- /usr/bin/python3 examples/allreduce.py`.
"""
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])

    # Each rank contributes rank + 1; the sum over ranks is world * (world + 1) / 2.
    tensor = torch.full((1024,), float(rank + 1))
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    expected = world * (world + 1) / 2
    ok = bool(torch.all(tensor == expected))

    iface = os.environ.get("GLOO_SOCKET_IFNAME", "-")
    line = (
        f"rank={rank} local_rank={os.environ['LOCAL_RANK']} world={world} "
        f"local_world={os.environ['LOCAL_WORLD_SIZE']} group_rank={os.environ['GROUP_RANK']} "
        f"master={os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} iface={iface} "
        f"run_id={os.environ.get('TORCHELASTIC_RUN_ID', '-')} "
        f"sum={tensor[0].item():g} expected={expected:g} {'OK' if ok else 'WRONG'}\n"
    )
    sys.stdout.write(line)  # one write per line: ranks share the terminal
    sys.stdout.flush()
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
