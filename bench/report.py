#!/usr/bin/python3
"""Turns bench/results/* into bench/results/RESULTS.md and PNG plots (gnuplot).
Run by bench/run.sh after the benchmarks; reads only what they wrote."""
import argparse, datetime, json, os, platform, subprocess, sys


def read_table(path):
    """Rows of numbers from an ddp-allreduce-bench output file (comment lines skipped)."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append([float(x) for x in line.split()])
    return rows


def versions(build):
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"
    return {
        "ddp-train": out([f"{build}/trainer/ddp-train", "--version"]).splitlines()[0:1],
        "torch": out(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"]),
        "slurm": "Slurm " + out(["dpkg-query", "-W", "-f=${Version}", "slurm-client"]),
        "gloo": out(["dpkg-query", "-W", "-f=${Version}", "libgloo0"]),
        "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
        "cpu": out(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"]),
        "cores": os.cpu_count(),
    }


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    p.add_argument("--build", default="build")
    a = p.parse_args()
    r = a.results
    v = versions(a.build)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.node()}: {v['cores']} cores ({v['cpu']})"
    lines = ["# slurm-ddp benchmarks", "",
             f"Generated {when} by `bench/run.sh` on {machine}. Versions: {v['ddp-train'][0] if v['ddp-train'] else '?'}, "
             f"PyTorch {v['torch']}, {v['slurm']}, Gloo {v['gloo']}, BLAS {v['blas']}. "
             "Every comparison ran paired (A B A B ...) in one run; ratios are taken pair by pair; "
             "figures are medians (min-max). Benchmarks, not tests: nothing asserts a time.", "",
             "## Headline", "", "| what | ours | peer | ratio |", "|---|---|---|---|"]
    body = []

    # --- training throughput: train (natively: Debian 12, PyTorch 1.13) and
    # train-trixie (a Debian 13 chroot, PyTorch 2.6), bench/train_bench.py's
    # tables; the headline is each ddp-train row over the fastest PyTorch run
    # of its round (train_bench.ratios), as there.
    import statistics as st
    from train_bench import ratios
    for name in ("train", "train-trixie"):
        tj = os.path.join(r, f"{name}.json")
        if not os.path.exists(tj):
            continue
        t = json.load(open(tj))
        torch = t["conditions"]["torch"]
        for key, cell in t["cells"].items():
            for ours in (n for n, rs in cell["runs"].items() if rs and not n.startswith("pytorch")):
                rate = st.median(x["steady_samples_per_second"] for x in cell["runs"][ours])
                q = ratios(cell, ours)
                lines.append(f"| training {key} (global batch {cell['global_batch']}), steady samples/s | {ours} "
                             f"{rate:,.0f} | the fastest PyTorch {torch} run of each round | {st.median(q):.2f}x "
                             f"({min(q):.2f}-{max(q):.2f}) |")
        body += [f"## Training throughput, PyTorch {torch} ({t['conditions']['distro']})", "",
                 open(os.path.join(r, f"{name}.md")).read().split("\n", 2)[2].strip(), ""]

    # --- launch latency: bench/launch_bench.py's own table, its overheads as the headline
    lj, lm = (os.path.join(r, n) for n in ("launch.json", "launch.md"))
    if os.path.exists(lj) and os.path.exists(lm):
        l = json.load(open(lj))
        lines.append(f"| launch, 2 nodes x 2 ranks, minimal torch job, overhead over the workers alone (median, "
                     f"{l['repeats']} rounds) | srun --ddp {l['overhead_ours_s']['median']:+.2f} s | torchrun "
                     f"--monitor_interval 0.1 {l['overhead_torchrun_s']['median']:+.2f} s | |")
        body += ["## Launch latency", "", open(lm).read().split("\n", 1)[1].strip(), ""]

    # --- collectives
    shm, gloo, mc = (os.path.join(r, n) for n in ("allreduce-shm.txt", "allreduce-gloo.txt", "memcpy.txt"))
    if all(os.path.exists(x) for x in (shm, gloo, mc)):
        S, G, M = read_table(shm), read_table(gloo), read_table(mc)
        by = lambda rows: {int(x[0]): x for x in rows}
        Sb, Gb, Mb = by(S), by(G), by(M)
        mib = 1 << 20
        if mib in Sb and mib in Gb:
            lines.append(f"| all-reduce 1 MiB, 2 ranks on one node, algbw GB/s | shared memory {Sb[mib][4]:.2f} | "
                         f"Gloo TCP {Gb[mib][4]:.2f} | {Sb[mib][4] / Gb[mib][4]:.1f}x |")
        body += ["## All-reduce bandwidth (CPU backend)", "",
                 "`ddp-allreduce-bench` under `ddp-agent --nproc 2` (the trainer's bucket path: pre-divide, SUM), "
                 "medians of 20 iterations per size (5 from 32 MiB); nccl-tests definitions: algbw = bytes / time, "
                 "busbw = algbw x 2(n-1)/n (= algbw for n = 2). Ceiling: single-thread memcpy of the same size. "
                 "The NCCL version (`ddp-gpu-allreduce-bw`) ran on one H100 through the GPU kit "
                 "(allreduce-nccl-h100-*.txt, and the GPU section below); across GPUs it has not run.", "",
                 "| bytes | shared memory: median us | algbw GB/s | Gloo TCP: median us | algbw GB/s | memcpy GB/s |",
                 "|---|---|---|---|---|---|"]
        for b in sorted(Sb):
            if b in Gb and b in Mb:
                body.append(f"| {b:,} | {Sb[b][1]:.0f} | {Sb[b][4]:.2f} | {Gb[b][1]:.0f} | {Gb[b][4]:.2f} | {Mb[b][4]:.1f} |")
        body += ["", "![all-reduce bandwidth](allreduce.png)", ""]
        data = os.path.join(r, ".allreduce.dat")
        with open(data, "w") as f:
            for b in sorted(Sb):
                if b in Gb and b in Mb:
                    f.write(f"{b} {Sb[b][4]} {Gb[b][4]} {Mb[b][4]}\n")
        gnuplot(f'''set terminal pngcairo size 900,500
set output "{r}/allreduce.png"
set title "all-reduce algbw, 2 ranks on one node (CPU backend)"
set logscale xy 2
set format x "%.0b%B"
set xlabel "bytes"
set ylabel "GB/s"
set key top left
set grid
plot "{data}" using 1:2 with linespoints title "shared memory", "{data}" using 1:3 with linespoints title "Gloo TCP", "{data}" using 1:4 with lines dt 2 title "memcpy (ceiling)"
''')
        os.remove(data)

    # --- scale simulation
    sj = os.path.join(r, "scale.json")
    if os.path.exists(sj):
        body += scale_section(json.load(open(sj)), r, lines)

    # --- GPU: the kit's table from a device run (tests/gpu/README.md), copied here as it came back
    gk = os.path.join(r, "gpu-kit-results.md")
    body += ["## GPU (the GPU kit)", ""]
    if os.path.exists(gk):
        body += [open(gk).read().split("\n", 1)[1].strip(), ""]
    else:
        body += ["Not measured yet: no GPU has run the kit. A session lent a GPU runs `tests/gpu/kit.sh` here and "
                 "the device call of tests/gpu/README.md there, and copies the `gpu-kit-results.md` it returns to "
                 "bench/results/.", ""]

    with open(os.path.join(r, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines + [""] + body) + "\n")


def scale_section(s, r, headline):
    """Rendezvous, failure and cut-off times of N simulated nodes (bench/scale_sim.py)."""
    res = s["results"]
    fmt = lambda st: f"{st['median']:.2f} ({st['min']:.2f}-{st['max']:.2f})"
    out = ["## Scale by simulation", "",
           f"N `ddp-agent` processes on loopback, one per simulated node, 1 worker each, with the plan the plugin "
           f"would give them (`bench/scale_sim.py`, {s['settings']['repeats']} runs per N; seconds, median (min-max)). "
           "All N agents share this machine's 2 cores, so large N measures the machine as much as the agents.", ""]
    rows = {e["n"]: e for e in res.get("rendezvous", []) if e.get("stats")}
    if rows:
        out += ["### Rendezvous (from the first agent's spawn)", "",
                "| N | all spawned | all joined | all workers started | job done | ok |", "|---|---|---|---|---|---|"]
        for n in sorted(rows):
            st = rows[n]["stats"]
            out.append(f"| {n} | {fmt(st['spawn_s'])} | {fmt(st['joined_s'])} | {fmt(st['workers_started_s'])} | "
                       f"{fmt(st['total_s'])} | {rows[n]['ok']}/{rows[n]['runs']} |")
        big = max(rows)
        headline.append(f"| rendezvous of {big} simulated nodes (loopback, 2 cores), s | all joined "
                        f"{rows[big]['stats']['joined_s']['median']:.2f} s after the first spawn "
                        f"(spawning takes {rows[big]['stats']['spawn_s']['median']:.2f}) | | |")
    fails = {e["n"]: e for e in res.get("failure", []) if e.get("stats")}
    if fails:
        out += ["", "### Failure detection (one worker SIGKILLed on node N-1; from the kill)", "",
                "| N | first agent exited | every agent exited | ok |", "|---|---|---|---|"]
        for n in sorted(fails):
            st = fails[n]["stats"]
            out.append(f"| {n} | {fmt(st['first_exit_s'])} | {fmt(st['all_exited_s'])} | {fails[n]['ok']}/{fails[n]['runs']} |")
        big = max(fails)
        headline.append(f"| worker death to every one of {big} agents stopped, s | "
                        f"{fails[big]['stats']['all_exited_s']['median']:.2f} | not measured | |")
    cut = {e["n"]: e for e in res.get("cutoff", []) if e.get("stats")}
    if cut:
        hb = s["settings"].get("heartbeat_timeout_s")
        out += ["", f"### Node cut-off (agent and worker of node N-1 SIGSTOPped; heartbeat timeout {hb} s; from the stop)",
                "", "| N | first agent exited | every other agent exited | ok |", "|---|---|---|---|"]
        for n in sorted(cut):
            st = cut[n]["stats"]
            key = "all_exited_s" if "all_exited_s" in st else "others_exited_s"
            out.append(f"| {n} | {fmt(st['first_exit_s'])} | {fmt(st[key])} | {cut[n]['ok']}/{cut[n]['runs']} |")
    # Plot: rendezvous and failure times against N.
    if rows:
        data = os.path.join(r, ".scale.dat")
        with open(data, "w") as f:
            for n in sorted(rows):
                fl = fails.get(n, {}).get("stats", {}).get("all_exited_s", {}).get("median", "NaN")
                f.write(f"{n} {rows[n]['stats']['joined_s']['median']} {rows[n]['stats']['spawn_s']['median']} {fl}\n")
        gnuplot(f'''set terminal pngcairo size 900,500
set output "{r}/scale.png"
set title "N simulated nodes on loopback (2 cores)"
set logscale x 2
set xlabel "nodes (agents)"
set ylabel "seconds"
set key top left
set grid
plot "{data}" using 1:2 with linespoints title "rendezvous: all joined", "{data}" using 1:3 with lines dt 2 title "spawning the agents", "{data}" using 1:4 with linespoints title "worker death -> every agent stopped"
''')
        os.remove(data)
        out += ["", "![scale](scale.png)", ""]
    for mode, entries in res.items():
        for e in entries:
            for err in e.get("errors", [])[:2]:
                out.append(f"- {mode} N={e['n']}: {str(err)[:300]}")
    return out


if __name__ == "__main__":
    sys.exit(main())
