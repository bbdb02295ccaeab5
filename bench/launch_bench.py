#!/usr/bin/python3
"""Launch latency on a local 2-node Slurm cluster (tests/cluster/cluster.sh):
wall time of a minimal torch.distributed job (bench/minimal_ddp.py, 4 ranks)

  ours:            srun -N2 --ddp=cpu --ddp-procs=2 python3 minimal_ddp.py
  torchrun:        srun -N2 --ntasks-per-node=1 --no-ddp torchrun --nnodes=2 --nproc_per_node=2
                   --node_rank=N --master_addr=... --monitor_interval 0.1 minimal_ddp.py
                   (static rendezvous; Debian's 1.13: --redirects/--tee). 0.1 s is
                   PyTorch 2.4+'s default and what a user of 1.13 would pass.
  torchrun_poll5:  the same with 1.13's default --monitor_interval (5 s): its agent
                   notices the workers' exit only at its next poll.
  floor:           srun -N2 --ntasks-per-node=2 --no-ddp with RANK/WORLD_SIZE/MASTER_* set by
                   hand from SLURM_PROCID etc.: the workers alone, no launcher

One unrecorded warm-up run of each, then --repeats rounds; within a round the
variants run in an order drawn from random.Random(--seed), so drift of the
machine over time and what one variant leaves behind (page cache, TIME_WAIT
sockets) fall on every variant alike. Each variant's overhead over the floor
is taken round by round (against the floor of the same round). Writes --out
(JSON) and the same name with .md: the numbers, the conditions (CPU, kernel,
Slurm, PyTorch, command line, seed) and each variant's exact command.

usage: bench/launch_bench.py [--build DIR] [--repeats N] [--seed S] [--out FILE.json]"""
import argparse, datetime, json, os, platform, random, shlex, shutil, statistics, subprocess, sys, time

from conditions import cpu, first_line, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
NAME = "blch"
PYTHON = "/usr/bin/python3"  # the interpreter with PyTorch; every variant's workers run it

LABELS = {
    "ours": "srun --ddp (ours)",
    "torchrun": "torchrun --monitor_interval 0.1 (PyTorch 2.4+'s default)",
    "torchrun_poll5": "torchrun, default 5 s polling (PyTorch 1.13's default)",
    "floor": "floor: workers alone, no launcher",
}


def sh(cmd, env=None, check=True):
    return subprocess.run(cmd, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def timed(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return dt


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "all": values}


def conditions(argv, torchrun):
    """What a reader needs to judge or repeat the numbers."""
    processor = cpu()
    commit, dirty = git_state(ROOT)
    u = platform.uname()
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_model": processor["model_name"], "cpu_family": processor["family"],
        "cpu_model_number": processor["model"], "cpu_stepping": processor["stepping"], "cores": os.cpu_count(),
        "kernel": f"{u.system} {u.release} {u.version} {u.machine}",
        "slurm": None,  # filled in once the cluster is up: srun needs its SLURM_CONF even for --version
        "pytorch": first_line([PYTHON, "-c", "import torch; print(torch.__version__)"]),
        "python_workers": first_line([PYTHON, "-c", "import sys; print(sys.version.split()[0])"]),
        "python_harness": platform.python_version(),
        "torchrun": torchrun,
        "git_commit": commit, "git_dirty": dirty,
        "command": shlex.join([sys.executable] + argv),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeats", type=int, default=15, help="recorded rounds (after one warm-up run of each)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the order within rounds (default: a fresh one, recorded in the output)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "launch.json"))
    a = p.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    md_out = os.path.splitext(a.out)[0] + ".md"
    # Debian's torchrun entry point runs on the same /usr/bin/python3.11 as the
    # other variants; without it, the module it wraps.
    tr = shutil.which("torchrun")
    torchrun = tr if tr else f"{PYTHON} -m torch.distributed.run"
    cond = conditions(sys.argv, torchrun)

    plugin = os.path.join(a.build, "spank", "spank_ddp.so")
    agent = os.path.join(a.build, "agent", "ddp-agent")
    for f in (plugin, agent):
        if not os.path.exists(f):
            sys.exit(f"launch_bench: no {f}: build first (cmake --build {a.build} --target spank_ddp ddp-agent)")
    sh([CLUSTER, "up", "--name", NAME, "--nodes", "2", "--plugin", plugin, "--agent", agent])
    try:
        env = dict(os.environ)
        cluster_env = {}
        for line in sh([CLUSTER, "env", "--name", NAME]).stdout.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                cluster_env[k] = v.strip("'\"")
        env.update(cluster_env)
        cond["slurm"] = first_line(["srun", "--version"], env)
        addr0 = [l.split("NodeAddr=")[1].split()[0] for l in
                 sh(["scontrol", "show", "node", f"{NAME}-n0"], env=env).stdout.split("\n") if "NodeAddr=" in l][0]
        script = os.path.join(HERE, "minimal_ddp.py")
        # On this cluster every node has the same host name: Gloo must be told the interface.
        extra_env = {"GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1"}
        wenv = dict(env, **extra_env)

        # torchrun's static rendezvous (as tests/integration/batch_step.sh):
        # with c10d, torchrun 1.13 hands the workers node 0's *host name* as
        # MASTER_ADDR, and the simulated nodes all share one host name. Each
        # variant has a port of its own, so none waits on another's TIME_WAIT.
        def torchrun_cmd(port, poll):
            interval = f"--monitor_interval {poll} " if poll is not None else ""
            return ["srun", "-N2", "--ntasks-per-node=1", "--no-ddp", "--export=ALL", "bash", "-c",
                    f"exec {torchrun} --nnodes=2 --nproc_per_node=2 --node_rank=$SLURM_NODEID "
                    f"--master_addr={addr0} --master_port={port} {interval}--redirects 9:0 --tee 9:0 {script}"]

        variants = {
            "ours": ["srun", "-N2", "--ddp=cpu", "--ddp-procs=2", PYTHON, script],
            "torchrun": torchrun_cmd(29411, 0.1),
            "torchrun_poll5": torchrun_cmd(29413, None),  # 1.13's own default: 5 s
            "floor": ["srun", "-N2", "--ntasks-per-node=2", "--no-ddp", "--export=ALL", "bash", "-c",
                      f"RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID "
                      f"MASTER_ADDR={addr0} MASTER_PORT=29412 exec {PYTHON} {script}"],
        }
        for name, cmd in variants.items():  # warm-up: page cache, Python imports
            timed(cmd, wenv)
        times = {k: [] for k in variants}
        orders = []
        for i in range(a.repeats):
            order = list(variants)
            rng.shuffle(order)
            orders.append(order)
            for name in order:
                times[name].append(timed(variants[name], wenv))
            print(f"round {i + 1}/{a.repeats}: " + ", ".join(f"{k} {times[k][-1]:.2f} s" for k in order), flush=True)
    finally:
        sh([CLUSTER, "down", "--name", NAME], check=False)

    floor = times["floor"]
    result = {
        "repeats": a.repeats,
        "seed": seed,
        "conditions": cond,
        "labels": LABELS,
        "commands": {k: {"argv": v, "shell": shlex.join(v)} for k, v in variants.items()},
        "environment_added": dict(cluster_env, **extra_env),
        "orders": orders,
        "seconds": {k: spread(v) for k, v in times.items()},
        "floor_spread_s": max(floor) - min(floor),
    }
    for k in variants:
        if k == "floor":
            continue
        over = [t - f for t, f in zip(times[k], floor)]
        result[f"overhead_{k}_s"] = spread(over)
        result[f"overhead_{k}_fraction"] = spread([o / f for o, f in zip(over, floor)])
    # ours against the competent torchrun directly, round by round
    result["ours_minus_torchrun_s"] = spread([o - t for o, t in zip(times["ours"], times["torchrun"])])

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    md = markdown(result)
    with open(md_out, "w") as f:
        f.write(md)
    print(md)
    print(f"wrote {a.out} and {md_out}")


def markdown(r):
    c = r["conditions"]
    s = r["seconds"]
    out = ["# Launch latency: 2 nodes x 2 ranks, minimal torch.distributed job", "",
           "Wall time of `bench/minimal_ddp.py` (init_process_group over env://, one all_reduce, 4 ranks) "
           "on a local 2-node Slurm cluster (tests/cluster/cluster.sh). One unrecorded warm-up run of each "
           f"variant, then {r['repeats']} rounds; within each round the variants run in a random order "
           f"(seed {r['seed']}). Overhead = the variant's time minus the floor's in the same round.", "",
           "| variant | median s | min-max s | overhead over floor, median s | min-max s | median % of floor |",
           "|---|---|---|---|---|---|"]
    for k, label in r["labels"].items():
        v = s[k]
        if k == "floor":
            out.append(f"| {label} | {v['median']:.2f} | {v['min']:.2f}-{v['max']:.2f} | - | - | - |")
        else:
            o, fr = r[f"overhead_{k}_s"], r[f"overhead_{k}_fraction"]
            out.append(f"| {label} | {v['median']:.2f} | {v['min']:.2f}-{v['max']:.2f} | {o['median']:+.2f} | "
                       f"{o['min']:+.2f} to {o['max']:+.2f} | {fr['median']:+.1%} |")
    d = r["ours_minus_torchrun_s"]
    out += ["", f"Floor's own spread (max - min over the rounds): {r['floor_spread_s']:.2f} s. "
                f"Ours minus torchrun --monitor_interval 0.1, round by round: median {d['median']:+.2f} s "
                f"({d['min']:+.2f} to {d['max']:+.2f}).", "",
            "## Rounds", "", "| round | order | " + " | ".join(r["labels"]) + " |",
            "|---|---|" + "---|" * len(r["labels"])]
    for i, order in enumerate(r["orders"]):
        out.append(f"| {i + 1} | {', '.join(order)} | " + " | ".join(f"{s[k]['all'][i]:.2f}" for k in r["labels"]) + " |")
    out += ["", "## Conditions", ""]
    out += [f"- {k}: `{v}`" for k, v in c.items()]
    out += [f"- rounds: {r['repeats']}", f"- seed: {r['seed']}", "", "## Commands", "",
            "Environment added to the caller's for every variant: "
            + ", ".join(f"`{k}={v}`" for k, v in r["environment_added"].items()) + ".", ""]
    for k, label in r["labels"].items():
        out += [f"{label} (`{k}`):", "", "```", r["commands"][k]["shell"], "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
