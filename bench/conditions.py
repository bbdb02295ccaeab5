"""What every benchmark records beside its numbers, so that a reader can judge
or repeat them: the CPU, the tree's commit, the first line a tool prints."""
import os, subprocess

# The flags that decide which kernels OpenBLAS, oneDNN and ddp-train's clones run.
KERNEL_FLAGS = {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile"}


def first_line(cmd, env=None, cwd=None):
    """The first line a command prints, or None when it cannot run or fails."""
    try:
        r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = r.stdout.strip().splitlines()
    return lines[0] if r.returncode == 0 and lines else None


def cpu():
    """The first processor's model name, family, model, stepping and kernel-relevant flags (they are alike)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip() and fields:
                    break
                k, _, v = line.partition(":")
                fields.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return {"model_name": fields.get("model name", "?"), "family": fields.get("cpu family", "?"),
            "model": fields.get("model", "?"), "stepping": fields.get("stepping", "?"),
            "flags": sorted(set(fields.get("flags", "").split()) & KERNEL_FLAGS)}


def git_state(root):
    """(commit, whether tracked files differ from it) of the tree at root; (None, False) outside git."""
    commit = first_line(["git", "-C", root, "rev-parse", "HEAD"])
    return commit, bool(first_line(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"]))
