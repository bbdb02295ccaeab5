"""A worker for stop_serving.sh and stop_grace.sh.

  worker.py checkpoint SECONDS   on SIGTERM: a line every 0.5 s for SECONDS
                                 ("writing a checkpoint"), then exit 0
  worker.py ignore               SIGTERM ignored: only SIGKILL ends it

Rank FAIL_RANK (default 3) exits 7 instead, two seconds after every rank has
installed its SIGTERM handler (each leaves READY_DIR/ready.RANK; the test
cluster's nodes share the file system), leaving the time of its exit in
READY_DIR/failed_at (so a test times the stop, not the start-up).
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
ready_dir = os.environ["READY_DIR"]
open(os.path.join(ready_dir, f"ready.{rank}"), "w").close()
if rank == int(os.environ.get("FAIL_RANK", "3")):
    world = int(os.environ["WORLD_SIZE"])
    deadline = time.time() + 30
    while len([f for f in os.listdir(ready_dir) if f.startswith("ready.")]) < world and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(2)
    with open(os.path.join(ready_dir, "failed_at"), "w") as f:
        f.write(f"{time.time():.3f}\n")
    sys.exit(7)
while True:
    time.sleep(0.1)
