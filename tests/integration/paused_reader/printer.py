"""A worker for paused_reader.sh: prints LINES lines ("rank R line I"), in
chunks of 1,000, touching DDP_PROGRESS_FILE between chunks when the hang watch
is on, as a training loop that logs every step would."""
import os
import pathlib
import sys

rank = os.environ["RANK"]
lines = int(os.environ.get("LINES", "60000"))
progress = os.environ.get("DDP_PROGRESS_FILE")
for start in range(0, lines, 1000):
    sys.stdout.write("".join(f"rank {rank} line {i}\n" for i in range(start, min(start + 1000, lines))))
    sys.stdout.flush()
    if progress:
        pathlib.Path(progress).touch()
