"""A worker for failure tests: joins the process group, says it is ready (with
its pid, so a test can kill it), then sleeps, reporting SIGUSR1/SIGUSR2.

    sleeper.py SECONDS
"""
import os
import signal
import sys
import time

import torch.distributed as dist


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    rank = int(os.environ["RANK"])

    def on_signal(sig, _frame):
        sys.stdout.write(f"rank {rank} got {signal.Signals(sig).name}\n")
        sys.stdout.flush()

    signal.signal(signal.SIGUSR1, on_signal)
    signal.signal(signal.SIGUSR2, on_signal)
    dist.init_process_group(backend="gloo", init_method="env://")
    sys.stdout.write(f"ready rank={rank} pid={os.getpid()} restart={os.environ['TORCHELASTIC_RESTART_COUNT']}\n")
    sys.stdout.flush()
    deadline = time.time() + seconds
    while time.time() < deadline:  # signals interrupt sleep(); keep sleeping to the deadline
        time.sleep(max(0.0, min(1.0, deadline - time.time())))
    dist.barrier()
    return 0


if __name__ == "__main__":
    sys.exit(main())
