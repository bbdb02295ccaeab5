#!/usr/bin/python3
"""slurmctld's RPCs per step: what --ddp adds to the one daemon a site cannot
scale out. On a local cluster of N nodes (tests/cluster/cluster.sh: one slurmd
per network namespace), run

  plain: srun -N N true
  ours:  srun -N N --ddp=cpu true

in rounds (plain, ours, plain, ...) inside one allocation (salloc -N N), so
that both kinds of step pay the same for the job, and read slurmctld's own
counters (`sdiag`, RPCs by message type) before and after each step. The
figure is the difference per step, by message type, with medians over the
rounds. Counts, not times: nothing here depends on the machine's speed.

usage: bench/rpc_bench.py [--build DIR] [--nodes 1,8,64] [--rounds N] [--name NAME]
       [--out bench/results/rpc-per-step.json]"""
import argparse, collections, json, os, re, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "tests", "cluster", "cluster.sh")


def sh(cmd, env=None, check=True, timeout=600):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def rpc_counts(env):
    """slurmctld's RPC counters by message type (sdiag's first table)."""
    out = sh(["sdiag"], env=env).stdout
    table = out.split("Remote Procedure Call statistics by message type", 1)[1]
    table = table.split("Remote Procedure Call statistics by user", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\S+)\s+\(\s*\d+\)\s+count:(\d+)", table, re.M)}


def step_rpcs(cmd, env):
    """The RPCs slurmctld counted while `cmd` ran, less sdiag's own."""
    before = rpc_counts(env)
    sh(cmd, env=env, timeout=300)
    after = rpc_counts(env)
    diff = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
    diff.pop("REQUEST_STATS_INFO", None)
    return {k: v for k, v in diff.items() if v}


def measure(nodes, rounds, build, name):
    plugin = os.path.join(build, "spank", "spank_ddp.so")
    agent = os.path.join(build, "agent", "ddp-agent")
    sh([CLUSTER, "up", "--name", name, "--nodes", str(nodes), "--plugin", plugin, "--agent", agent], timeout=900)
    try:
        env = dict(os.environ, SLURM_CONF=f"/tmp/slurm-ddp-clusters/{name}/slurm.conf")
        # One allocation for every step: salloc runs this script again as
        # its command, with the job's variables set; srun then makes steps.
        r = sh(["salloc", "-N", str(nodes), "-Q", sys.executable, os.path.abspath(__file__),
                "--inner", str(nodes), "--rounds", str(rounds)], env=env, timeout=1800)
        return json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        sh([CLUSTER, "down", "--name", name], check=False)


def inner(nodes, rounds):
    env = dict(os.environ)
    kinds = {"plain": ["srun", "-N", str(nodes), "true"], "ours": ["srun", "-N", str(nodes), "--ddp=cpu", "true"]}
    seen = {k: [] for k in kinds}
    # Warm-up: the first steps of a fresh cluster meet slurmds still
    # registering (MESSAGE_NODE_REGISTRATION_STATUS), which is not the steps'.
    for cmd in kinds.values():
        sh(cmd, env=env, timeout=300)
    time.sleep(5)
    for _ in range(rounds):
        for kind, cmd in kinds.items():
            seen[kind].append(step_rpcs(cmd, env))
    print(json.dumps(seen))


def summarize(nodes, seen):
    row = {"nodes": nodes}
    for kind, steps in seen.items():
        row[kind] = statistics.median(sum(s.values()) for s in steps)
        types = collections.Counter()
        for s in steps:
            types.update(s)
        row[kind + "_by_type"] = {k: v / len(steps) for k, v in sorted(types.items())}
    row["added"] = row["ours"] - row["plain"]
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--nodes", default="1,8,64")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--name", default="rpcb")
    p.add_argument("--label", default="this tree")
    p.add_argument("--out", default=os.path.join(HERE, "results", "rpc-per-step.json"))
    p.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.inner:
        return inner(a.inner, a.rounds)
    rows = [summarize(n, measure(n, a.rounds, a.build, a.name)) for n in map(int, a.nodes.split(","))]
    results = {"label": a.label, "rounds": a.rounds, "rows": rows}
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1)
    lines = [f"slurmctld RPCs per step ({a.label}; medians of {a.rounds} steps each, sdiag's own left out)", "",
             "| nodes | plain srun | srun --ddp | added by --ddp | --ddp's extra RPCs by type (mean per step) |",
             "|---|---|---|---|---|"]
    for r in rows:
        extra = {k: v - r["plain_by_type"].get(k, 0) for k, v in r["ours_by_type"].items()}
        shown = ", ".join(f"{k} {v:+g}" for k, v in extra.items() if abs(v) >= 0.5)
        lines.append(f"| {r['nodes']} | {r['plain']:g} | {r['ours']:g} | {r['added']:+g} | {shown} |")
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
