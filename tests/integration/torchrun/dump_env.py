"""A worker that writes its environment to PREFIX.RANK, one NAME=VALUE a line."""
import os
import sys

with open(f"{sys.argv[1]}.{os.environ['RANK']}", "w") as f:
    for name in sorted(os.environ):
        f.write(f"{name}={os.environ[name]}\n")
