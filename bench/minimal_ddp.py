#!/usr/bin/python3
"""The launch-latency payload: a minimal torch.distributed job (init over
env://, one all_reduce, destroy), the same under every launcher."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
assert t.item() == dist.get_world_size(), t
dist.destroy_process_group()
