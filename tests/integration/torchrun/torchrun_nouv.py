"""PyTorch's own torchrun, with its TCPStores made without libuv.

Debian builds PyTorch 2.x without libuv, and torchrun's rendezvous asks for a
libuv store, so Debian's torchrun cannot start at all. This starts the same
torchrun (torch.distributed.run.main) with use_libuv=False forced, so the test
can see the environment torchrun gives its workers.
"""
import sys

import torch.distributed as dist

_TCPStore = dist.TCPStore


class _StoreWithoutLibuv(_TCPStore):
    def __init__(self, *args, **kwargs):
        kwargs["use_libuv"] = False
        super().__init__(*args, **kwargs)


dist.TCPStore = _StoreWithoutLibuv
from torch.distributed.run import main  # noqa: E402  (after the patch, which its modules import)

sys.exit(main())
