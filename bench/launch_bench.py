#!/usr/bin/python3
"""Launch latency on a local 2-node Slurm cluster (tests/cluster/cluster.sh):
wall time of a minimal torch.distributed job (bench/minimal_ddp.py, 4 ranks)

  ours:     srun -N2 --ddp=cpu --ddp-procs=2 python3 minimal_ddp.py
  torchrun: srun -N2 --ntasks-per-node=1 --no-ddp torchrun --nnodes=2 --nproc_per_node=2
            --node_rank=N --master_addr=... minimal_ddp.py   (static rendezvous; Debian's
            1.13: --redirects/--tee)
  floor:    srun -N2 --ntasks-per-node=2 --no-ddp with RANK/WORLD_SIZE/MASTER_* set by
            hand from SLURM_PROCID etc.: the workers alone, no launcher

run in rounds (ours, torchrun, floor, ours, ...); the overhead over the floor
is taken round by round. Writes bench/results/launch.json; prints a table.

usage: bench/launch_bench.py [--build DIR] [--repeats N]"""
import argparse, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
NAME = "bnch"


def sh(cmd, env=None, check=True):
    return subprocess.run(cmd, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def timed(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return dt


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default=os.path.join(HERE, "results", "launch.json"))
    a = p.parse_args()
    plugin = os.path.join(a.build, "spank", "spank_ddp.so")
    agent = os.path.join(a.build, "agent", "ddp-agent")
    sh([CLUSTER, "up", "--name", NAME, "--nodes", "2", "--plugin", plugin, "--agent", agent])
    try:
        env = dict(os.environ)
        for line in sh([CLUSTER, "env", "--name", NAME]).stdout.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v.strip("'\"")
        addr0 = [l.split("NodeAddr=")[1].split()[0] for l in
                 sh(["scontrol", "show", "node", f"{NAME}-n0"], env=env).stdout.split("\n") if "NodeAddr=" in l][0]
        script = os.path.join(HERE, "minimal_ddp.py")
        # On this cluster every node has the same host name: Gloo must be told the interface.
        wenv = dict(env, GLOO_SOCKET_IFNAME="eth0", OMP_NUM_THREADS="1")
        variants = {
            "ours": ["srun", "-N2", "--ddp=cpu", "--ddp-procs=2", "/usr/bin/python3", script],
            # torchrun's static rendezvous (as tests/integration/batch_step.sh):
            # with c10d, torchrun 1.13 hands the workers node 0's *host name* as
            # MASTER_ADDR, and the simulated nodes all share one host name.
            "torchrun": ["srun", "-N2", "--ntasks-per-node=1", "--no-ddp", "--export=ALL", "bash", "-c",
                         f"exec torchrun --nnodes=2 --nproc_per_node=2 --node_rank=$SLURM_NODEID "
                         f"--master_addr={addr0} --master_port=29411 --redirects 9:0 --tee 9:0 {script}"],
            "floor": ["srun", "-N2", "--ntasks-per-node=2", "--no-ddp", "--export=ALL", "bash", "-c",
                      f"RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID "
                      f"MASTER_ADDR={addr0} MASTER_PORT=29412 exec /usr/bin/python3 {script}"],
        }
        for name, cmd in variants.items():  # warm-up: page cache, Python imports
            timed(cmd, wenv)
        times = {k: [] for k in variants}
        for i in range(a.repeats):
            for name, cmd in variants.items():
                times[name].append(timed(cmd, wenv))
            print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    finally:
        sh([CLUSTER, "down", "--name", NAME], check=False)
    over_ours = [o - f for o, f in zip(times["ours"], times["floor"])]
    over_torch = [t - f for t, f in zip(times["torchrun"], times["floor"])]
    rel_ours = [(o - f) / f for o, f in zip(times["ours"], times["floor"])]
    result = {
        "repeats": a.repeats,
        "seconds": {k: {"median": statistics.median(v), "min": min(v), "max": max(v), "all": v}
                    for k, v in times.items()},
        "overhead_ours_s": {"median": statistics.median(over_ours), "min": min(over_ours), "max": max(over_ours)},
        "overhead_torchrun_s": {"median": statistics.median(over_torch), "min": min(over_torch),
                                "max": max(over_torch)},
        "overhead_ours_fraction": {"median": statistics.median(rel_ours), "min": min(rel_ours), "max": max(rel_ours)},
    }
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "seconds"}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
