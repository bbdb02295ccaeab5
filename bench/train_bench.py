#!/usr/bin/python3
"""ddp-train against PyTorch, the peer at its best, in one run on this machine.

Cells (model x shape x per-worker batch), each run by every contender in
rounds; within a round the contenders and cells go in a random order (seeded,
recorded), so drift on a shared VM falls on all of them alike:

  2n1w  srun -N2 --ddp=cpu --ddp-procs=1: two nodes of a local Slurm cluster
        (tests/cluster/cluster.sh), one worker each, Gloo over TCP between
        them. The headline: no shortcut of ours helps here.
  1n2w  srun -N1 --ddp=cpu --ddp-procs=2: one node, two workers. ddp-train's
        ranks reduce in shared memory (labelled so) and, as a row of its own,
        over Gloo TCP (--no-shm); PyTorch's over Gloo TCP.
  1p2t  one process with 2 threads, no launcher, no process group: what a
        user with one 2-core node runs.

Contenders: ddp-train as shipped; PyTorch DDP (bench/pytorch_ddp.py, the same
model, data, sampler, optimizer and global batch) as shipped and as a
competent user tunes it: --foreach optimizers, --channels-last for the CNN,
torch.compile where PyTorch has it (2.x). 1 thread per worker (2 in 1p2t),
the same OpenBLAS underneath, OPENBLAS_CORETYPE dropped.

Throughput is the steady state: samples/s over epochs 2 to E (epoch 1 pays
for warm-up on both sides: torch.compile, allocators, the first transfers).
Ratios are taken round by round against each peer and against the best peer
(the highest median); medians with min and max. The machine's limit is
measured in the same run (ddp-sgemm-bench: the model's matrix products
alone, one and two cores at once) before and after, and each row is shown
as a fraction of it. Round i trains with seed i mod 3 on every side: the
MLP's accuracy is reported per seed.

Writes bench/results/NAME.md and NAME.json with the conditions (CPU and its
flags, BLAS and its kernels, threads, sysctls, versions, the command).
Benchmarks assert nothing.

usage: bench/train_bench.py [--build DIR] [--models mlp,cnn] [--shapes 2n1w,1n2w,1p2t]
                            [--pairs N] [--seed S] [--name NAME] [--out DIR]"""
import argparse, ctypes, datetime, json, os, platform, random, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
DATA = "/usr/share/datasets/fashion-mnist"
PYTHON = "/usr/bin/python3"

# Per model: global batches by shape's per-worker batch, epochs, the rows
# each epoch sees (0: all 60,000) and the default number of rounds.
MODELS = {
    "mlp": {"per_worker": [64, 256], "epochs": 3, "rows": 0, "pairs": 7,
            "peers": ["pytorch", "pytorch+foreach", "pytorch+foreach+compile"]},
    "cnn": {"per_worker": [64], "epochs": 3, "rows": 8192, "pairs": 10,
            "peers": ["pytorch", "pytorch+foreach+channels_last", "pytorch+foreach+channels_last+compile"]},
}


def sh(cmd, env=None, check=True):
    return subprocess.run(cmd, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def torch_version():
    return sh([PYTHON, "-c", "import torch; print(torch.__version__)"]).stdout.strip()


def has_compile():
    return sh([PYTHON, "-c", "import torch, sys; sys.exit(0 if hasattr(torch, 'compile') else 1)"], check=False
              ).returncode == 0


class Cell:
    """One model x shape x per-worker batch, and the commands of its contenders."""

    def __init__(self, model, shape, per_worker, a, peers):
        self.model, self.shape, self.per_worker = model, shape, per_worker
        spec = MODELS[model]
        # Two workers of per_worker each; 1p2t: one process with both halves and two threads.
        self.global_batch = 2 * per_worker
        self.threads = 2 if shape == "1p2t" else 1
        self.epochs = spec["epochs"]
        common = ["--model", model, "--data", DATA, "--epochs", str(self.epochs), "--batch-size",
                  str(self.global_batch), "--threads", str(self.threads)]
        if spec["rows"]:
            common += ["--limit-train", str(spec["rows"])]
        launch = {"2n1w": ["srun", "-N2", "--ddp=cpu", "--ddp-procs=1"],
                  "1n2w": ["srun", "-N1", "--ddp=cpu", "--ddp-procs=2"], "1p2t": []}[shape]
        ours = launch + [os.path.join(a.build, "trainer", "ddp-train")] + common
        self.contenders = {"ddp-train" + (" (shared memory)" if shape == "1n2w" else ""): ours}
        if shape == "1n2w":
            self.contenders["ddp-train --no-shm"] = ours + ["--no-shm"]
        for peer in peers:
            flags = ["--" + f.replace("_", "-") for f in peer.split("+")[1:]]
            self.contenders[peer] = launch + [PYTHON, os.path.join(HERE, "pytorch_ddp.py")] + common + flags
        self.threads_of = {name: self.threads for name in self.contenders}
        if shape == "1p2t":
            # PyTorch's intra-op threads can cost more than they give on a small model: the
            # one-thread process is what a user who measured would run.
            for peer in peers:
                name = peer + ", 1 thread"
                self.contenders[name] = [c if c != "2" or self.contenders[peer][i - 1] != "--threads" else "1"
                                         for i, c in enumerate(self.contenders[peer])]
                self.threads_of[name] = 1

    @property
    def key(self):
        return f"{self.model} {self.shape} b{self.per_worker}"


def run_once(cmd, env, seed, metrics):
    """The run's record: steady samples/s (epochs 2..E), its test metric and the whole run's rate."""
    ours = PYTHON not in cmd
    cmd = cmd + ["--seed", str(seed)] + (["--metrics", metrics] if ours else [])
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-3000:]}")
    if ours:
        with open(metrics) as f:
            records = [json.loads(line) for line in f]
        os.remove(metrics)
        epochs = [x for x in records if x.get("event") == "epoch"]
        final = [x for x in records if x.get("event") == "final"][-1]
        steady = epochs[1:]
        seconds = sum(x["seconds"] for x in steady)
        rate = sum(x["samples_per_second"] * x["seconds"] for x in steady) / seconds
        return {"steady_samples_per_second": rate, "samples_per_second": final["samples_per_second"],
                "test_accuracy": final.get("test_accuracy")}
    for line in reversed(r.stdout.splitlines()):
        line = line.split("] ", 1)[-1] if line.startswith("[rank") else line
        if line.startswith("{") and '"final"' in line:
            final = json.loads(line)
            return {"steady_samples_per_second": final["steady_samples_per_second"],
                    "samples_per_second": final["samples_per_second"], "test_accuracy": final.get("test_accuracy")}
    raise RuntimeError("no final record in:\n" + r.stdout[-3000:])


def sgemm_limit(build, model, batch, concurrent):
    r = sh([os.path.join(build, "bench", "ddp-sgemm-bench"), "--model", model, "--batch", str(batch), "--concurrent",
            str(concurrent), "--seconds", "2"])
    return json.loads(r.stdout.strip().splitlines()[-1])


def conditions(a, env):
    def text(cmd):
        try:
            return subprocess.run(cmd, env=env, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"

    cpu = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            cpu.setdefault(k.strip(), v.strip())
    flags = set(cpu.get("flags", "").split())
    sysctls = {}
    for name in ("net.core.somaxconn", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max",
                 "net.core.wmem_max", "kernel.sched_autogroup_enabled"):
        try:
            with open("/proc/sys/" + name.replace(".", "/")) as f:
                sysctls[name] = " ".join(f.read().split())
        except OSError:
            pass
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = lib.openblas_get_config.restype = ctypes.c_char_p
        openblas = {"corename": lib.openblas_get_corename().decode(), "config": lib.openblas_get_config().decode()}
    except OSError:
        openblas = {}
    return {
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host": platform.node(), "distro": platform.freedesktop_os_release().get("PRETTY_NAME", "?"),
        "kernel": platform.release(), "cores": os.cpu_count(),
        "cpu": f"{cpu.get('model name', '?')} (family {cpu.get('cpu family', '?')}, model {cpu.get('model', '?')})",
        "cpu_flags": sorted(flags & {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile"}),
        "openblas": openblas, "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
        "torch": torch_version(), "python": platform.python_version(),
        "torch_config": text([PYTHON, "-c", "import torch; print(torch.__config__.show())"]),
        "ddp_train": text([os.path.join(a.build, "trainer", "ddp-train"), "--version"]).splitlines()[:1],
        "slurm": text(["srun", "--version"]), "gloo": text(["dpkg-query", "-W", "-f=${Package} ${Version}\\n", "libgloo*"]),
        "sysctls": sysctls, "threads_env": {k: env.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "command": " ".join([sys.argv[0]] + sys.argv[1:]), "seed": a.seed,
    }


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def limit_for(cell, limits):
    """The limit for a cell: its model's products on both cores at once, each at the per-worker batch
    (1p2t: half the process's batch per core)."""
    return limits[(cell.model, cell.per_worker, 2)]


def table(cells, results, failed, limits, cond):
    lines = [f"# ddp-train vs PyTorch, the peer at its best (CPU, Fashion-MNIST; PyTorch {cond['torch']})", "",
             f"Measured {cond['when']} on {cond['host']} ({cond['distro']}, kernel {cond['kernel']}), "
             f"{cond['cores']} cores: {cond['cpu']}, flags {', '.join(cond['cpu_flags'])}; OpenBLAS "
             f"{cond['openblas'].get('config', '?')}, kernels {cond['openblas'].get('corename', '?')} ({cond['blas']}) "
             f"on both sides; {cond['slurm']}; Python {cond['python']}; {cond['ddp_train'][0] if cond['ddp_train'] else ''}. "
             f"Command: `{cond['command']}` (seed {cond['seed']}). Sysctls: "
             + "; ".join(f"{k} = {v}" for k, v in cond["sysctls"].items()) + ".", "",
             "Steady-state samples/s (epochs 2 to E), medians (min-max) over the rounds; ratios round by round. "
             "Limit: the model's matrix products alone on two cores at once (`ddp-sgemm-bench --concurrent 2`), "
             "measured before and after the runs (the lower taken).", ""]
    for cell in cells:
        rows = results[cell.key]
        lim = limit_for(cell, limits)
        lines += [f"## {cell.model}, {cell.shape}, per-worker batch {cell.per_worker} (global {cell.global_batch}), "
                  f"{cell.threads} thread(s) per process, {cell.epochs} epochs"
                  + (f" of {MODELS[cell.model]['rows']} rows" if MODELS[cell.model]["rows"] else ""), "",
                  f"Limit: {lim['samples_per_second_total']:,.0f} samples/s ({lim['gflops_total']:.0f} GFLOP/s on 2 cores, "
                  f"{lim['flop_per_sample'] / 1e6:.2f} MFLOP per sample).", "",
                  "| contender | samples/s | min | max | of the limit | accuracy (seed 0 / 1 / 2) | ddp-train / this |",
                  "|---|---|---|---|---|---|---|"]
        ours_name = next(iter(cell.contenders))
        ours = {r["round"]: r["steady_samples_per_second"] for r in rows[ours_name]}
        peers = [n for n in cell.contenders if n.startswith("pytorch") and rows[n]]
        best = max(peers, key=lambda n: statistics.median(r["steady_samples_per_second"] for r in rows[n]))
        for name in cell.contenders:
            if not rows[name]:
                first = failed[cell.key].get(name, "no run").strip().splitlines()
                lines.append(f"| {name} | failed: {first[-1][:200] if first else '?'} | | | | | |")
                continue
            rates = [r["steady_samples_per_second"] for r in rows[name]]
            s = stats(rates)
            acc = {}
            for r in rows[name]:
                acc.setdefault(r["seed"], []).append(r["test_accuracy"])
            accs = " / ".join(f"{statistics.median(acc[k]):.4f}" for k in sorted(acc))
            ratio = ""
            if name.startswith("pytorch"):
                rs = stats([ours[r["round"]] / r["steady_samples_per_second"] for r in rows[name] if r["round"] in ours])
                ratio = f"{rs['median']:.2f}x ({rs['min']:.2f}-{rs['max']:.2f})"
            label = name + (" **(best peer)**" if name == best else "")
            lines.append(f"| {label} | {s['median']:,.0f} | {s['min']:,.0f} | {s['max']:,.0f} | "
                         f"{s['median'] / lim['samples_per_second_total']:.0%} | {accs} | {ratio} |")
        lines.append("")
    return lines


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--shapes", default="2n1w,1n2w,1p2t")
    p.add_argument("--cnn-shapes", default="2n1w", help="the CNN's shapes (about 20 s a run)")
    p.add_argument("--pairs", type=int, help="rounds (default: the MLP 7, the CNN 10)")
    p.add_argument("--peers", help="comma-separated peer variants (default: per model, compile only on PyTorch 2)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="train")
    a = p.parse_args()
    env = dict(os.environ, GLOO_SOCKET_IFNAME="eth0")
    env.pop("OPENBLAS_CORETYPE", None)  # OpenBLAS's own choice for this CPU, as on a user's node
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    compile_ok = has_compile()
    cells = []
    for model in a.models.split(","):
        spec = MODELS[model]
        peers = a.peers.split(",") if a.peers else [x for x in spec["peers"] if compile_ok or "compile" not in x]
        shapes = (a.cnn_shapes if model == "cnn" else a.shapes).split(",")
        for shape in shapes:
            batches = spec["per_worker"] if shape == "2n1w" else spec["per_worker"][:1]
            cells += [Cell(model, shape, b, a, peers) for b in batches]
    os.makedirs(a.out, exist_ok=True)
    prefix = os.environ.get("DDP_CLUSTER_PREFIX", "")
    name = (prefix + "btrain")[:8]
    plugin, agent = os.path.join(a.build, "spank", "spank_ddp.so"), os.path.join(a.build, "agent", "ddp-agent")
    rng = random.Random(a.seed)
    metrics = os.path.join(a.out, f".{a.name}-metrics.jsonl")  # rank 0 writes it; the nodes share this disk
    results = {c.key: {n: [] for n in c.contenders} for c in cells}
    failed = {c.key: {} for c in cells}
    limits = {}

    def measure_limits(when):
        for model, per_worker in dict.fromkeys((c.model, c.per_worker) for c in cells):
            for k in (1, 2):
                got = sgemm_limit(a.build, model, per_worker, k)
                limits.setdefault((model, per_worker, k), []).append(dict(got, when=when))

    sh([CLUSTER, "up", "--name", name, "--nodes", "2", "--plugin", plugin, "--agent", agent])
    try:
        for line in sh([CLUSTER, "env", "--name", name]).stdout.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v.strip("'\"")
        cond = conditions(a, env)
        measure_limits("before")
        rounds = max(a.pairs or MODELS[c.model]["pairs"] for c in cells)
        for i in range(rounds):
            work = [(c, n) for c in cells if i < (a.pairs or MODELS[c.model]["pairs"]) for n in c.contenders]
            rng.shuffle(work)
            for cell, contender in work:
                threads = str(cell.threads_of[contender])
                renv = dict(env, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
                if contender in failed[cell.key]:
                    continue
                try:
                    rec = run_once(cell.contenders[contender], renv, i % 3, metrics)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    # A peer variant this PyTorch cannot run (torch.compile without a compiler, say) is
                    # reported as such, and the others go on.
                    failed[cell.key][contender] = str(e)
                    print(f"round {i + 1}/{rounds}: {cell.key}: {contender}: FAILED, dropped:\n{e}", flush=True)
                    continue
                rec.update(seed=i % 3, round=i)
                results[cell.key][contender].append(rec)
                print(f"round {i + 1}/{rounds}: {cell.key}: {contender}: {rec['steady_samples_per_second']:,.0f}/s "
                      f"(accuracy {rec['test_accuracy']})", flush=True)
        measure_limits("after")
    finally:
        sh([CLUSTER, "down", "--name", name], check=False)
    # The lower of before and after: a limit, not a hope.
    lowest = {k: min(v, key=lambda x: x["samples_per_second_total"]) for k, v in limits.items()}
    lines = table(cells, results, failed, lowest, cond)
    lines += ["Single-core limits (one thread alone): " + "; ".join(
        f"{m} batch {b}: {lowest[(m, b, 1)]['gflops_total']:.0f} GFLOP/s" for (m, b, k) in lowest if k == 1) + ".", "",
              "Commands (each with `--seed` and, for ddp-train, `--metrics`):", ""]
    for cell in cells:
        for n, cmd in cell.contenders.items():
            lines.append(f"- {cell.key}, {n}: `{' '.join(cmd)}`")
    with open(os.path.join(a.out, f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, f"{a.name}.json"), "w") as f:
        json.dump({"conditions": cond, "limits": {f"{m} b{b} x{k}": v for (m, b, k), v in limits.items()},
                   "cells": {c.key: {"commands": c.contenders, "global_batch": c.global_batch, "threads": c.threads,
                                     "runs": results[c.key], "failed": failed[c.key]} for c in cells}}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
