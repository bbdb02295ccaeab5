#!/usr/bin/python3
"""ddp-train against PyTorch, the peer at its best, in one run on this machine.

Cells (model x shape x per-worker batch), each run by every contender in
rounds; within a round the contenders and cells go in a random order (seeded,
recorded), so drift on a shared VM falls on all of them alike:

  2n1w  srun -N2 --ddp=cpu --ddp-procs=1: two nodes of a local Slurm cluster
        (tests/cluster/cluster.sh: network namespaces on this machine,
        sharing its cores, TCP over veth), one worker each, Gloo over TCP
        between them on both sides. The headline: no shortcut of ours helps.
  1n2w  srun -N1 --ddp=cpu --ddp-procs=2: one node, two workers. ddp-train's
        ranks reduce in shared memory (labelled so) and, as a row of its own,
        over Gloo TCP (--no-shm); PyTorch's over Gloo TCP.
  1p2t  one process on both cores, no launcher, no process group: what a user
        with one 2-core node runs.

Contenders: ddp-train as shipped; PyTorch DDP (bench/pytorch_ddp.py, the same
model, data, sampler, optimizer and global batch) as shipped and as a
competent user tunes it: foreach optimizers, DDP's gradient_as_bucket_view,
AVX-512 kernels (ATEN_CPU_CAPABILITY), channels_last for the CNN,
torch.compile where PyTorch has it (2.x); in 1p2t also on one intra-op
thread (with one or two OpenBLAS threads) and with OMP_WAIT_POLICY=PASSIVE.
One thread per worker in the multi-worker shapes; OPENBLAS_CORETYPE dropped.

Throughput is the steady state: samples/s over epochs 2 to E (epoch 1 pays
for warm-up on both sides: torch.compile, allocators, the first transfers).
Every ddp-train row's ratio is taken round by round against the fastest
PyTorch run of the same round (and, in the JSON, against each variant);
medians with min and max. The sgemm bound of ddp-train's step (ddp-sgemm-
bench: its matrix products alone, one and two cores at once) is measured
before and after the runs, the higher taken, and each row shown as a fraction
of it: for the MLP PyTorch runs the same products through the same OpenBLAS;
its convolutions go through oneDNN instead, so for the CNN the bound is
ddp-train's own. Round i trains with seed i mod 3 on every side.

Writes bench/results/NAME.md and NAME.json with the conditions (CPU and its
flags, BLAS and its kernels, each contender's threads and environment,
sysctls, versions, the git commit, the command). Benchmarks assert nothing.

usage: bench/train_bench.py [--build DIR] [--models mlp,cnn] [--shapes 2n1w,1n2w,1p2t]
                            [--pairs N] [--seed S] [--name NAME] [--out DIR]
       bench/train_bench.py --render NAME.json      # the table again, from a run's JSON"""
import argparse, ctypes, datetime, json, os, platform, random, statistics, subprocess, sys

from conditions import cpu, first_line, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
DATA = "/usr/share/datasets/fashion-mnist"
PYTHON = "/usr/bin/python3"

# Per model: per-worker batches in 2n1w (the other shapes take the first),
# epochs, the rows an epoch sees (0: all 60,000), rounds, PyTorch's variants
# (flags of pytorch_ddp.py joined by "+"; "avx512" is ATEN_CPU_CAPABILITY).
MODELS = {
    "mlp": {"per_worker": [64, 256], "epochs": 3, "rows": 0, "pairs": 7,
            "peers": ["pytorch", "pytorch+foreach", "pytorch+foreach+bucket_view+avx512",
                      "pytorch+foreach+bucket_view+avx512+compile"]},
    "cnn": {"per_worker": [64], "epochs": 3, "rows": 8192, "pairs": 10,
            "peers": ["pytorch", "pytorch+foreach+channels_last+bucket_view+avx512",
                      "pytorch+foreach+channels_last+bucket_view+avx512+compile"]},
}


def sh(cmd, env=None, check=True):
    return subprocess.run(cmd, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def torch_has(probe):
    return sh([PYTHON, "-c", f"import torch, sys; sys.exit(0 if ({probe}) else 1)"], check=False).returncode == 0


class Cell:
    """One model x shape x per-worker batch: its contenders' commands and environments."""

    def __init__(self, model, shape, per_worker, build, peers):
        self.model, self.shape, self.per_worker = model, shape, per_worker
        spec = MODELS[model]
        self.global_batch = 2 * per_worker  # two workers; 1p2t: one process with both halves
        self.epochs = spec["epochs"]
        threads = 2 if shape == "1p2t" else 1
        common = ["--model", model, "--data", DATA, "--epochs", str(self.epochs), "--batch-size",
                  str(self.global_batch)] + (["--limit-train", str(spec["rows"])] if spec["rows"] else [])
        launch = {"2n1w": ["srun", "-N2", "--ddp=cpu", "--ddp-procs=1"],
                  "1n2w": ["srun", "-N1", "--ddp=cpu", "--ddp-procs=2"], "1p2t": []}[shape]
        threads_env = lambda intra, blas=None: {"OMP_NUM_THREADS": str(intra), "OPENBLAS_NUM_THREADS": str(blas or intra)}
        ours = launch + [os.path.join(build, "trainer", "ddp-train")] + common + ["--threads", str(threads)]
        self.contenders = {}  # name -> (argv, environment added)
        self.contenders["ddp-train" + (" (shared memory)" if shape == "1n2w" else "")] = (ours, threads_env(threads))
        if shape == "1n2w":
            self.contenders["ddp-train --no-shm"] = (ours + ["--no-shm"], threads_env(threads))
        peer = launch + [PYTHON, os.path.join(HERE, "pytorch_ddp.py")] + common
        eager = [v for v in peers if "compile" not in v.split("+")]
        for variant in peers:
            parts = variant.split("+")[1:]
            flags = ["--" + f.replace("_", "-") for f in parts if f != "avx512"]
            env = threads_env(threads) | ({"ATEN_CPU_CAPABILITY": "avx512"} if "avx512" in parts else {})
            self.contenders[variant] = (peer + flags + ["--threads", str(threads)], env)
            if shape == "1p2t" and eager and variant == eager[-1]:
                # Intra-op threads can cost more than they give on a small model, and
                # libgomp spins while it waits: what a user who measured would try
                # (with the most tuned eager variant).
                one = peer + flags + ["--threads", "1"]
                self.contenders[variant + ", 1 thread"] = (one, env | threads_env(1))
                self.contenders[variant + ", 1 thread, OpenBLAS 2"] = (one, env | threads_env(1, 2))
                self.contenders[variant + ", OMP_WAIT_POLICY=PASSIVE"] = (
                    self.contenders[variant][0], env | {"OMP_WAIT_POLICY": "PASSIVE"})

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
        steady = [x for x in records if x.get("event") == "epoch"][1:]
        final = [x for x in records if x.get("event") == "final"][-1]
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


def sgemm_bound(build, model, batch, concurrent):
    r = sh([os.path.join(build, "bench", "ddp-sgemm-bench"), "--model", model, "--batch", str(batch), "--concurrent",
            str(concurrent), "--seconds", "2"])
    return json.loads(r.stdout.strip().splitlines()[-1])


def conditions(build, env):
    processor = cpu()
    commit, dirty = git_state(ROOT)
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
        "cpu": f"{processor['model_name']} (family {processor['family']}, model {processor['model']})",
        "cpu_flags": processor["flags"],
        "openblas": openblas, "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
        "torch": first_line([PYTHON, "-c", "import torch; print(torch.__version__)"]) or "?",
        "python": platform.python_version(),
        "torch_config": sh([PYTHON, "-c", "import torch; print(torch.__config__.show())"], check=False).stdout.strip(),
        "ddp_train": first_line([os.path.join(build, "trainer", "ddp-train"), "--version"]) or "?",
        "git": (commit[:7] if commit else "unknown (no git)") + (" (uncommitted changes)" if dirty else ""),
        "slurm": first_line(["srun", "--version"], env) or "?",
        "gloo": sh(["dpkg-query", "-W", "-f=${Package} ${Version}\\n", "libgloo*"], check=False).stdout.strip(),
        "sysctls": sysctls, "command": " ".join([sys.argv[0]] + sys.argv[1:]),
    }


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def ratios(cell, name):
    """ddp-train row `name` over the fastest PyTorch run of the same round, round by round."""
    runs = cell["runs"]
    fastest = {}
    for peer, rs in runs.items():
        if peer.startswith("pytorch"):
            for r in rs:
                fastest[r["round"]] = max(fastest.get(r["round"], 0), r["steady_samples_per_second"])
    return [r["steady_samples_per_second"] / fastest[r["round"]] for r in runs[name] if r["round"] in fastest]


def render(result):
    """The markdown tables of a run's JSON."""
    cond = result["conditions"]
    bounds = {k: max(v, key=lambda x: x["samples_per_second_total"]) for k, v in result["bounds"].items()}
    lines = [f"# ddp-train vs PyTorch, the peer at its best (CPU, Fashion-MNIST; PyTorch {cond['torch']})", "",
             f"Measured {cond['when']} on {cond['host']} ({cond['distro']}, kernel {cond['kernel']}), "
             f"{cond['cores']} cores: {cond['cpu']}, flags {', '.join(cond['cpu_flags'])}; OpenBLAS: "
             f"{cond['openblas'].get('config', '?')}, kernels {cond['openblas'].get('corename', '?')} "
             f"({cond['blas']}); {cond['slurm']}; Python {cond['python']}; {cond['ddp_train']} at {cond['git']}. "
             f"Command: `{cond['command']}` (seed {result['seed']}). Sysctls: "
             + "; ".join(f"{k} = {v}" for k, v in cond["sysctls"].items()) + "."
             + (f" Note: {cond['note']}." if cond.get("note") else ""), "",
             "Steady-state samples/s (epochs 2 to E), medians (min-max) over the rounds. A ddp-train row's ratio "
             "is taken round by round against the fastest PyTorch run of the same round. The bound: ddp-train's "
             "matrix products alone on two cores at once (`ddp-sgemm-bench --concurrent 2`, the higher of before "
             "and after); PyTorch's MLP runs the same products on the same OpenBLAS, its convolutions go through "
             "oneDNN.", ""]
    for key, cell in result["cells"].items():
        model, shape, batch = key.split()
        bound = bounds[f"{model} {batch[1:]} x2"]
        lines += [f"## {key}: per-worker batch {batch[1:]} (global {cell['global_batch']}), "
                  f"{cell['epochs']} epochs" + (f" of {cell['rows']} rows" if cell.get("rows") else ""), "",
                  f"Bound: {bound['samples_per_second_total']:,.0f} samples/s ({bound['gflops_total']:.0f} GFLOP/s "
                  f"on 2 cores, {bound['flop_per_sample'] / 1e6:.2f} MFLOP per sample).", "",
                  "| contender | samples/s | min | max | of the bound | accuracy (seed 0 / 1 / 2) | over the fastest PyTorch run of its round |",
                  "|---|---|---|---|---|---|---|"]
        for name, rows in cell["runs"].items():
            if not rows:
                why = (cell["failed"].get(name) or "no run").strip().splitlines()
                lines.append(f"| {name} | failed: {why[-1][:200] if why else '?'} | | | | | |")
                continue
            s = stats([r["steady_samples_per_second"] for r in rows])
            acc = {}
            for r in rows:
                acc.setdefault(r["seed"], []).append(r["test_accuracy"])
            accs = " / ".join(f"{statistics.median(acc[k]):.4f}" for k in sorted(acc))
            ratio = ""
            if not name.startswith("pytorch"):
                rs = stats(ratios(cell, name))
                ratio = f"{rs['median']:.2f}x ({rs['min']:.2f}-{rs['max']:.2f})"
            lines.append(f"| {name} | {s['median']:,.0f} | {s['min']:,.0f} | {s['max']:,.0f} | "
                         f"{s['median'] / bound['samples_per_second_total']:.0%} | {accs} | {ratio} |")
        lines.append("")
    lines += ["Single-core bounds (one process alone, the higher of before and after): " + "; ".join(
        f"{k.rsplit(' ', 1)[0]}: {v['gflops_total']:.0f} GFLOP/s" for k, v in bounds.items() if k.endswith("x1")) + ".",
              "", "Commands (each with `--seed` and, for ddp-train, `--metrics`), with the environment each adds:", ""]
    for key, cell in result["cells"].items():
        for name, (argv, env) in cell["commands"].items():
            lines.append(f"- {key}, {name}: `{' '.join(f'{k}={v}' for k, v in env.items())} {' '.join(argv)}`")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--shapes", default="2n1w,1n2w,1p2t")
    p.add_argument("--cnn-shapes", default="2n1w", help="the CNN's shapes (about 25 s a run)")
    p.add_argument("--pairs", type=int, help="rounds (default: the MLP 7, the CNN 10)")
    p.add_argument("--peers", help="comma-separated PyTorch variants (default: per model; compile only on PyTorch 2)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="train")
    p.add_argument("--render", metavar="JSON", help="only write the table of an earlier run's JSON beside it")
    a = p.parse_args()
    if a.render:
        with open(a.render) as f:
            table = render(json.load(f))
        with open(a.render.removesuffix(".json") + ".md", "w") as f:
            f.write(table)
        print(table)
        return
    env = dict(os.environ, GLOO_SOCKET_IFNAME="eth0")
    env.pop("OPENBLAS_CORETYPE", None)  # OpenBLAS's own choice for this CPU, as on a user's node
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "OMP_WAIT_POLICY",
              "ATEN_CPU_CAPABILITY"):
        env.pop(k, None)
    compile_ok = torch_has("hasattr(torch, 'compile')")
    avx512_ok = "avx512f" in open("/proc/cpuinfo").read()
    cells = []
    for model in a.models.split(","):
        spec = MODELS[model]
        peers = a.peers.split(",") if a.peers else spec["peers"]
        peers = [x for x in peers if (compile_ok or "compile" not in x) and (avx512_ok or "avx512" not in x)]
        for shape in (a.cnn_shapes if model == "cnn" else a.shapes).split(","):
            batches = spec["per_worker"] if shape == "2n1w" else spec["per_worker"][:1]
            cells += [Cell(model, shape, b, a.build, peers) for b in batches]
    os.makedirs(a.out, exist_ok=True)
    name = (os.environ.get("DDP_CLUSTER_PREFIX", "") + "btrain")[:8]
    plugin, agent = os.path.join(a.build, "spank", "spank_ddp.so"), os.path.join(a.build, "agent", "ddp-agent")
    rng = random.Random(a.seed)
    metrics = os.path.join(a.out, f".{a.name}-metrics.jsonl")  # rank 0 writes it; the nodes share this disk
    result = {"seed": a.seed, "bounds": {}, "cells": {
        c.key: {"global_batch": c.global_batch, "epochs": c.epochs, "rows": MODELS[c.model]["rows"],
                "commands": c.contenders, "runs": {n: [] for n in c.contenders}, "failed": {}} for c in cells}}

    def measure_bounds(when):
        for model, per_worker in dict.fromkeys((c.model, c.per_worker) for c in cells):
            for k in (1, 2):
                got = sgemm_bound(a.build, model, per_worker, k)
                result["bounds"].setdefault(f"{model} {per_worker} x{k}", []).append(dict(got, when=when))

    sh([CLUSTER, "up", "--name", name, "--nodes", "2", "--plugin", plugin, "--agent", agent])
    try:
        for line in sh([CLUSTER, "env", "--name", name]).stdout.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v.strip("'\"")
        result["conditions"] = conditions(a.build, env)
        measure_bounds("before")
        rounds_of = {c.key: a.pairs or MODELS[c.model]["pairs"] for c in cells}
        rounds = max(rounds_of.values())
        for i in range(rounds):
            work = [(c, n) for c in cells if i < rounds_of[c.key] for n in c.contenders]
            rng.shuffle(work)
            for cell, contender in work:
                entry = result["cells"][cell.key]
                if contender in entry["failed"]:
                    continue
                argv, added = cell.contenders[contender]
                try:
                    rec = run_once(argv, env | added, i % 3, metrics)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    # A variant this PyTorch cannot run (torch.compile without a compiler, say) is
                    # reported as such, and the others go on.
                    entry["failed"][contender] = str(e)
                    print(f"round {i + 1}/{rounds}: {cell.key}: {contender}: FAILED, dropped:\n{e}", flush=True)
                    continue
                rec.update(seed=i % 3, round=i)
                entry["runs"][contender].append(rec)
                print(f"round {i + 1}/{rounds}: {cell.key}: {contender}: {rec['steady_samples_per_second']:,.0f}/s "
                      f"(accuracy {rec['test_accuracy']})", flush=True)
        measure_bounds("after")
    finally:
        sh([CLUSTER, "down", "--name", name], check=False)
    with open(os.path.join(a.out, f"{a.name}.json"), "w") as f:
        json.dump(result, f, indent=1)
    table = render(result)
    with open(os.path.join(a.out, f"{a.name}.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    sys.exit(main())
