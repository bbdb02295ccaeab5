#!/usr/bin/python3
"""The tutorials' CNN (PyTorch's MNIST example `Net`) through Slurm, side by
side on a local 2-node cluster (tests/cluster/cluster.sh), in one run:

  ours:    srun -N2 --ddp=cpu --ddp-procs=1 ddp-train --model cnn --threads 1
  PyTorch: srun -N2 --ddp=cpu --ddp-procs=1 python3 bench/pytorch_ddp.py --model cnn --threads 1
           (DistributedDataParallel over Gloo, the same network, Adadelta 1.0
           with StepLR 0.7, the same global batch 128)

2 workers, 1 thread each, the same OpenBLAS underneath (PyTorch's build
configuration is printed into the result), Fashion-MNIST, the same epochs;
each side's samples/s over its training time and its test accuracy. Pairs
run A B A B; ratios pair by pair; medians with min and max. Writes
bench/results/cnn.md and cnn.json.

usage: bench/cnn_bench.py [--build DIR] [--repeats N] [--epochs E]"""
import argparse, datetime, json, os, platform, statistics, subprocess, sys

from trainer_bench import final_record  # the peer's final JSON line, found in its output

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
DATA = "/usr/share/datasets/fashion-mnist"
NAME = "bcnn"


def sh(cmd, env=None, check=True):
    return subprocess.run(cmd, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def train(cmd, env, metrics=None):
    """The run's final record: from its --metrics file (ddp-train) or its output (the peer)."""
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-3000:]}")
    if not metrics:
        return final_record(r.stdout)
    with open(metrics) as f:
        record = [json.loads(line) for line in f if '"final"' in line][-1]
    os.remove(metrics)
    return record


def openblas_kernels(env):
    """The kernel set OpenBLAS loads under env (both sides load the same library)."""
    probe = "import ctypes; f = ctypes.CDLL('libopenblas.so.0').openblas_get_corename; " \
            "f.restype = ctypes.c_char_p; print(f().decode())"
    return sh(["/usr/bin/python3", "-c", probe], env=env).stdout.strip()


def cpu_model():
    """The CPU's name with its family and model (a VM may show only "AMD EPYC")."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name", platform.machine())
    return f"{name} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"


def cluster_env(env):
    for line in sh([CLUSTER, "env", "--name", NAME]).stdout.splitlines():
        if line.startswith("export "):
            k, v = line[len("export "):].split("=", 1)
            env[k] = v.strip("'\"")
    return env


def table(rows, a, torch_config, when, kernels):
    def stats(values):
        return statistics.median(values), min(values), max(values)

    lines = ["# The tutorials' CNN: ddp-train vs PyTorch DDP under srun --ddp (CPU, Fashion-MNIST)", "",
             f"Measured {when} on {platform.node()} ({os.cpu_count()} cores), a local 2-node Slurm cluster, "
             f"2 workers (srun -N2 --ddp=cpu --ddp-procs=1), 1 thread each, global batch 128, {a.epochs} epoch(s), "
             f"{a.repeats} pairs run A B A B, ratios pair by pair. Command: `bench/cnn_bench.py --epochs {a.epochs} --repeats {a.repeats}`. "
             f"CPU: {cpu_model()}; OpenBLAS's kernels: {kernels} "
             f"({'pinned by OPENBLAS_CORETYPE' if a.openblas_coretype else 'its own choice for this CPU'}).",
             "", "| what | median | min | max |", "|---|---|---|---|"]
    for key, label in (("ours", "ddp-train"), ("peer", "PyTorch DDP (Gloo)")):
        acc = statistics.median(r["test_accuracy"] for r in rows[key])
        m, lo, hi = stats([r["samples_per_second"] for r in rows[key]])
        lines.append(f"| {label}: samples/s (test accuracy {acc:.4f}) | {m:.0f} | {lo:.0f} | {hi:.0f} |")
    m, lo, hi = stats(rows["ratio"])
    lines += [f"| ddp-train / PyTorch | {m:.2f}x | {lo:.2f}x | {hi:.2f}x |", "",
              "PyTorch's build (`torch.__config__.show()`):", "", "```", torch_config.strip(), "```"]
    return lines


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--openblas-coretype", help="pin OpenBLAS's kernels for both sides (default: its own choice)")
    a = p.parse_args()
    plugin, agent = os.path.join(a.build, "spank", "spank_ddp.so"), os.path.join(a.build, "agent", "ddp-agent")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", GLOO_SOCKET_IFNAME="eth0")
    # OpenBLAS's kernels as a user's node gets them (the library's own choice
    # for the CPU), unless pinned: an OPENBLAS_CORETYPE left in the caller's
    # environment (Haswell, say: AVX2 on an AVX-512 CPU) would slow
    # ddp-train's convolutions and not PyTorch's (oneDNN).
    env.pop("OPENBLAS_CORETYPE", None)
    if a.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = a.openblas_coretype
    kernels = openblas_kernels(env)
    srun = ["srun", "-N2", "--ddp=cpu", "--ddp-procs=1"]
    ours = srun + [os.path.join(a.build, "trainer", "ddp-train"), "--model", "cnn", "--data", DATA, "--epochs",
                   str(a.epochs), "--batch-size", "128", "--threads", "1"]
    peer = srun + ["/usr/bin/python3", os.path.join(HERE, "pytorch_ddp.py"), "--model", "cnn", "--data", DATA,
                   "--epochs", str(a.epochs), "--batch-size", "128", "--threads", "1"]
    sh([CLUSTER, "up", "--name", NAME, "--nodes", "2", "--plugin", plugin, "--agent", agent])
    rows = {"ours": [], "peer": [], "ratio": []}
    try:
        env = cluster_env(env)
        for i in range(a.repeats):
            metrics = os.path.join(a.out, ".cnn-metrics.jsonl")  # rank 0 writes it; the nodes share this disk
            rows["ours"].append(train(ours + ["--metrics", metrics], env, metrics))
            rows["peer"].append(train(peer, env))
            rows["ratio"].append(rows["ours"][-1]["samples_per_second"] / rows["peer"][-1]["samples_per_second"])
            print(f"pair {i + 1}: ddp-train {rows['ours'][-1]['samples_per_second']:.0f}/s "
                  f"(accuracy {rows['ours'][-1]['test_accuracy']:.4f}), PyTorch "
                  f"{rows['peer'][-1]['samples_per_second']:.0f}/s (accuracy {rows['peer'][-1]['test_accuracy']:.4f})",
                  flush=True)
    finally:
        sh([CLUSTER, "down", "--name", NAME], check=False)
    torch_config = sh(["/usr/bin/python3", "-c", "import torch; print(torch.__version__); print(torch.__config__.show())"]
                      ).stdout
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = table(rows, a, torch_config, when, kernels)
    with open(os.path.join(a.out, "cnn.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "cnn.json"), "w") as f:
        json.dump({"when": when, "epochs": a.epochs, "cpu": cpu_model(), "openblas_kernels": kernels,
                   "torch_config": torch_config, "rows": rows}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
