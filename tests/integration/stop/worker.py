"""A worker for stop_serving.sh and stop_grace.sh.

  worker.py checkpoint SECONDS   on SIGTERM: a line every 0.5 s for SECONDS
                                 ("writing a checkpoint"), then exit 0
  worker.py ignore               SIGTERM ignored: only SIGKILL ends it

Rank FAIL_RANK (default 3) exits 7 two seconds after its start instead.
"""
import os
import signal
import sys
import time

rank = int(os.environ["RANK"])
mode = sys.argv[1]


def checkpoint(signum, frame):
    for i in range(int(float(sys.argv[2]) * 2)):
        print(f"rank {rank} checkpoint line {i}", flush=True)
        time.sleep(0.5)
    print(f"rank {rank} checkpoint done", flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, checkpoint if mode == "checkpoint" else signal.SIG_IGN)
print(f"rank {rank} ready", flush=True)
if rank == int(os.environ.get("FAIL_RANK", "3")):
    time.sleep(2)
    sys.exit(7)
while True:
    time.sleep(0.1)
