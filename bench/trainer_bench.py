#!/usr/bin/python3
"""ddp-train against PyTorch DDP, side by side on this machine.

Pairs A B A B ...: each repeat runs ddp-train with 2 workers, the PyTorch DDP
equivalent (bench/pytorch_ddp.py) with 2 workers, and ddp-train with 1 worker,
all under ddp-agent (the same launcher), 1 BLAS thread per worker, the same
BLAS (whatever libblas.so.3 points at, reported). Ratios are taken pair by
pair; medians with min and max. Writes bench/results/trainer.md and .json.

usage: bench/trainer_bench.py [--build DIR] [--repeats N] [--models mlp,ae] [--name trainer]

--name names the result files (NAME.md, NAME.json): tests/chroot/run.sh
--bench runs this in a Debian 13 chroot as trainer-trixie, against PyTorch
2.6 and trixie's OpenBLAS."""
import argparse, datetime, json, os, platform, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = "/usr/share/datasets/fashion-mnist"


def final_record(output):
    for line in reversed(output.splitlines()):
        line = line.split("] ", 1)[-1] if line.startswith("[rank") else line
        if line.startswith("{") and '"final"' in line:
            return json.loads(line)
    raise RuntimeError("no final record in:\n" + output[-3000:])


def run(cmd, env):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-3000:]}")
    return r.stdout


def ours(build, model, nproc, env, metrics):
    cmd = [f"{build}/agent/ddp-agent", "--nproc", str(nproc), "--", f"{build}/trainer/ddp-train", "--model", model,
           "--data", DATA, "--epochs", "3", "--batch-size", "128", "--threads", "1", "--metrics", metrics]
    run(cmd, env)
    with open(metrics) as f:
        return [json.loads(l) for l in f if '"final"' in l][-1]


def peer(build, model, nproc, env):
    cmd = [f"{build}/agent/ddp-agent", "--nproc", str(nproc), "--", "/usr/bin/python3",
           os.path.join(HERE, "pytorch_ddp.py"), "--model", model, "--epochs", "3", "--batch-size", "128",
           "--threads", "1"]
    return final_record(run(cmd, env))


def sgemm_limit(build):
    """(GFLOP/s, samples/s per core) of the MLP's matrix products alone (bench/sgemm_bench.cpp)."""
    r = subprocess.run([f"{build}/bench/ddp-sgemm-bench"], capture_output=True, text=True, check=True)
    gflops, per_core = r.stdout.split()
    return float(gflops), float(per_core)


def blas():
    try:
        return os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    except OSError:
        return "unknown"


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--models", default="mlp,ae")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="trainer")
    a = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, ".metrics.jsonl")
    results = {}
    for model in a.models.split(","):
        rows = {"ours2": [], "peer2": [], "ours1": [], "ratio": [], "scaling": []}
        for i in range(a.repeats):
            o2 = ours(a.build, model, 2, env, tmp)
            p2 = peer(a.build, model, 2, env)
            o1 = ours(a.build, model, 1, env, tmp)
            rows["ours2"].append(o2)
            rows["peer2"].append(p2)
            rows["ours1"].append(o1)
            rows["ratio"].append(o2["samples_per_second"] / p2["samples_per_second"])
            rows["scaling"].append(o2["samples_per_second"] / o1["samples_per_second"])
            print(f"{model} repeat {i + 1}: ours(2) {o2['samples_per_second']:.0f}/s, "
                  f"pytorch(2) {p2['samples_per_second']:.0f}/s, ours(1) {o1['samples_per_second']:.0f}/s",
                  flush=True)
        results[model] = rows
    os.remove(tmp)
    gflops, per_core = sgemm_limit(a.build)
    cores = os.cpu_count()
    limit = 2 * per_core  # two workers on two cores doing nothing but the products
    torch_version = subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    version = subprocess.run([f"{a.build}/trainer/ddp-train", "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# ddp-train vs PyTorch DDP (CPU, Fashion-MNIST)", "",
        f"Measured {when} on {platform.node()} ({cores} cores, {platform.processor() or platform.machine()}), "
        f"{version}, PyTorch {torch_version}, BLAS {blas()} (both sides), 1 BLAS thread per worker, "
        f"global batch 128, 3 epochs, both launched by ddp-agent. {a.repeats} pairs, run A B A B; "
        "ratios taken pair by pair. Command: `bench/trainer_bench.py`.", "",
        "| model | what | median | min | max |", "|---|---|---|---|---|"]
    for model, rows in results.items():
        metric = "test_accuracy" if model == "mlp" else "test_mse"
        for key, label in (("ours2", "ddp-train, 2 workers"), ("peer2", "PyTorch DDP, 2 workers"),
                           ("ours1", "ddp-train, 1 worker")):
            s = stats([r["samples_per_second"] for r in rows[key]])
            m = statistics.median([r[metric] for r in rows[key]])
            lines.append(f"| {model} | {label}: samples/s ({metric} {m:.4f}) | {s['median']:.0f} | "
                         f"{s['min']:.0f} | {s['max']:.0f} |")
        for key, label in (("ratio", "ddp-train / PyTorch, 2 workers"), ("scaling", "ddp-train 2 workers / 1 worker")):
            s = stats(rows[key])
            lines.append(f"| {model} | {label} | {s['median']:.2f}x | {s['min']:.2f}x | {s['max']:.2f}x |")
    if "mlp" in results:
        med = statistics.median([r["samples_per_second"] for r in results["mlp"]["ours2"]])
        lines += ["", f"sgemm-bound limit for the MLP on 2 cores: the MLP's matrix products alone (forward, dW, "
                      f"dX but for the first layer; batch 64; single-thread OpenBLAS at {gflops:.0f} GFLOP/s) run at "
                      f"{per_core:.0f} samples/s per core, {limit:.0f} on 2 cores (`build/bench/ddp-sgemm-bench`); "
                      f"ddp-train with 2 workers reaches {med / limit:.0%} of it."]
    distro = platform.freedesktop_os_release().get("PRETTY_NAME", "unknown")
    lines[2] = lines[2].replace(f"on {platform.node()} ", f"on {platform.node()} ({distro}) ", 1)
    with open(os.path.join(a.out, f"{a.name}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, f"{a.name}.json"), "w") as f:
        json.dump({"when": when, "torch": torch_version, "distro": distro, "sgemm_gflops": gflops,
                   "sgemm_samples_per_core": per_core, "results": results}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
