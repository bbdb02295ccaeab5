#!/usr/bin/python3
"""Scale to 16,384 nodes on one machine: node 0 is a real ddp-agent (its
coordinator, its own worker), the other N-1 nodes are simulated in one
process that speaks the rendezvous protocol as an agent does (the handshake
with the step's secret, JOIN, a heartbeat every second, STOPPED, FAIL's
report) but starts no worker. bench/scale_sim.py runs a real agent per node
and reaches 1,024 on this machine; spawning 16,384 agents would not fit it.

The simulator of failfast and spare is bench/rdzv_swarm.cpp (ddp-rdzv-swarm):
the agents' own rendezvous client (rdzv_client.hpp), one per node, in one
event loop: its retries and heartbeats are the agents'. Pre-flight, and
failfast/spare with --swarm '', use this script's asyncio simulator: each
node connects from an address of its own (127.1.x.y, all on loopback) and
retries every 250 ms when shed; for 16,384 nodes it needs several times the
CPU of the C++ one. Measured, each --repeats times:

  rendezvous  from node 0's spawn (the simulated nodes connect at once) to
              every simulated node holding START: the handshake, JOIN and
              START for all of them.
  failfast    once all run: node N-1 reports a worker failure (FAIL); time
              until every simulated node has its STOP.
  spare       --ddp-spares=1 (node N-1 waits): once all run, node N-2's
              connection ends (a crash); time until the spare holds START of
              attempt 1 (its workers would start now).

  preflight   --ddp-preflight=check: from node 0's first CHECKCPU to every
              node holding START. Each simulated node is a host of its own:
              it answers CHECKCPU after the GEMM's time with a made-up rate
              (the last node a tenth of the others': it must be named), and
              CHECKNET by really sending to the node named (node 0's agent
              or another simulated node) for the time asked; node N-2 sends
              64 KiB every 50 ms (its link must be named). Each listens on
              its own address and times what it receives, as an agent's
              check sink does; node 0 runs its real GEMM and transfers.

and node 0's agent's peak memory (VmHWM) and CPU time (user + system) over the
run. Node 0's own worker is `sleep 300`.

The kernel caps node 0's listen backlog at net.core.somaxconn: the 16,384-node
numbers need `sysctl -w net.core.somaxconn=16384` (as root) first. The script
warns when N exceeds it and records it, and net.ipv4.tcp_max_syn_backlog, under
"conditions" in its output; it changes neither.

usage: bench/scale_light.py [--ns 1024,4096,16384] [--repeats 3] [--modes failfast,spare|preflight]
                            [--agent PATH] [--swarm PATH] [--out FILE]
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import os
import platform
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


def mac(secret, run, node, snonce, cnonce):
    text = f"slurm-ddp rdzv v1 client-mac run={run} node={node} snonce={snonce} cnonce={cnonce}"
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def fields(line):
    verb, *rest = line.split(" ")
    return verb, {k: urllib.parse.unquote(v) for k, v in (p.split("=", 1) for p in rest if "=" in p)}


def plan_env(n, secret, rdzv_port, master_port, spares, preflight="off"):
    env = {k: v for k, v in os.environ.items() if not (k.startswith("DDP_") or k.startswith("SLURM_"))}
    groups = n - spares
    plan = {"VERSION": "5", "RUN_ID": f"light{os.getpid()}-{n}", "MODE": "cpu", "NODE_RANK": "0",
            "NNODES": str(n), "NPROC": "1", "RANK_BASE": "0", "WORLD_SIZE": str(groups),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(master_port), "MASTER_PORT_FIXED": "1",
            "MAX_RESTARTS": str(spares), "STOP_GRACE_MS": "2000", "EXPORT_IB_HCA": "0",
            "JOB_ID": str(os.getpid()), "STEP_ID": "0", "PORT_RANGE": "20000-29999",
            "RDZV_PORT": str(rdzv_port), "MASTER_INTERFACE": "", "RDZV_TIMEOUT_MS": "120000",
            "HEARTBEAT_TIMEOUT_MS": "10000", "REQUEUE": "0", "REQUEUE_WAIT_MS": "60000",
            "HANG_TIMEOUT_MS": "0", "SPARES": str(spares), "MIN_NODES": "0", "GROUP_RANK": "0",
            "GROUPS": str(groups), "HEALTH_CHECK": "", "HEALTH_CHECK_TIMEOUT_MS": "60000", "VERBOSE": "0",
            "PREFLIGHT": preflight}
    env.update({"DDP_PLAN_" + k: v for k, v in plan.items()})
    env["SLURM_DDP_SECRET"] = secret
    return env


def free_port():
    """A free port of the plan's PortRange (20000-29999), below the kernel's
    ephemeral ports: the simulated nodes' own ports come from those, and node
    0's port claim passes by a port that any connection uses, TIME_WAIT ones
    of the run before included."""
    import random
    while True:
        port = random.randint(20000, 29999)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
                return port
            except OSError:
                pass


class Node:
    """One simulated node: its connection and what it has been told."""

    def __init__(self, sim, rank):
        self.sim, self.rank = sim, rank
        self.source = f"127.1.{rank >> 8}.{rank & 255}"
        self.writer = None
        self.starts = {}  # attempt -> monotonic time START came
        self.stops = {}
        self.first_check = None
        self.check_port = 0

    async def handshake(self):
        while True:
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", self.sim.port, local_addr=(self.source, 0), limit=1 << 20)
                verb, f = fields((await reader.readline()).decode().rstrip("\n"))
                cnonce = secrets.token_hex(32)
                writer.write(f"RESPONSE node={self.rank} cnonce={cnonce} "
                             f"mac={mac(self.sim.secret, f['run'], self.rank, f['nonce'], cnonce)} "
                             f"version={f['protocol']} release=sim\n".encode())
                verb, _ = fields((await reader.readline()).decode().rstrip("\n"))
                if verb == "WELCOME":
                    return reader, writer
                writer.close()
            except (OSError, KeyError, asyncio.IncompleteReadError):
                pass
            self.sim.retries += 1
            await asyncio.sleep(0.25)

    async def run(self):
        if self.sim.preflight:
            server = await asyncio.start_server(self.receive, self.source, 0)
            self.check_port = server.sockets[0].getsockname()[1]
        reader, self.writer = await self.handshake()
        port = f" check_port={self.check_port}" if self.check_port else ""
        self.writer.write(f"JOIN nproc=1 workers= host=sim{self.rank} addr={self.source}{port}\n".encode())
        beat = asyncio.create_task(self.heartbeat())
        try:
            while line := await reader.readline():
                verb, f = fields(line.decode().rstrip("\n"))
                now = time.monotonic()
                if verb == "START":
                    self.starts[int(f["attempt"])] = now
                    self.sim.count("start", int(f["attempt"]))
                elif verb == "STOP":
                    self.stops[int(f["attempt"])] = now
                    self.writer.write(f"STOPPED attempt={f['attempt']}\n".encode())
                    self.sim.count("stop", int(f["attempt"]))
                elif verb in ("CHECKCPU", "CHECKNET"):
                    self.first_check = self.first_check or now
                    asyncio.create_task(self.check(verb, f))
                elif verb in ("DONE", "BYE"):
                    break
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            beat.cancel()

    async def check(self, verb, f):
        """A pre-flight check: a GEMM's time and a made-up rate, or a real transfer."""
        await asyncio.sleep(int(f["ms"]) / 1000) if verb == "CHECKCPU" else None
        if verb == "CHECKCPU":
            rate = 10000 if self.rank == self.sim.n - 1 else 100000
            self.writer.write(f"CHECKED what=compute mflops={rate}\n".encode())
            return
        slow = self.rank == self.sim.n - 2
        try:
            _, w = await asyncio.open_connection(f["addr"], int(f["port"]), local_addr=(self.source, 0))
            w.write((f["token"] + "\n").encode())
            until, block = time.monotonic() + int(f["ms"]) / 1000, b"x" * (1 << 16 if slow else 1 << 20)
            while time.monotonic() < until:
                w.write(block)
                await w.drain()
                await asyncio.sleep(0.05) if slow else None
            w.write_eof()
            await w.drain()
            w.close()
        except OSError as e:
            self.writer.write(f"CHECKED what=network token={f['token']} failed={urllib.parse.quote(str(e))}\n".encode())

    async def receive(self, reader, writer):
        """A transfer to this node, timed as an agent's check sink does."""
        token = (await reader.readline()).decode().strip()
        received, first, last = 0, None, None
        while chunk := await reader.read(1 << 20):
            now = time.monotonic()
            received += len(chunk) if first else 0
            first, last = first or now, now
        writer.close()
        if first and last > first:
            kbps = round(received / 1000 / (last - first))
            self.writer.write(f"CHECKED what=network token={token} kbps={kbps}\n".encode())
        else:  # as the agents say it: node 0 never waits out a turn for an answer
            self.writer.write(f"CHECKED what=network token={token}\n".encode())

    async def heartbeat(self):
        while True:
            await asyncio.sleep(1)
            self.writer.write(b"HB\n")

    def crash(self):
        self.writer.transport.abort()


class Sim:
    def __init__(self, a, n, spares):
        self.a, self.n, self.spares = a, n, spares
        self.secret = secrets.token_hex(32)
        self.port, self.master_port = free_port(), free_port()
        self.nodes = [Node(self, r) for r in range(1, n)]
        self.started, self.stopped = asyncio.Event(), asyncio.Event()
        self.retries = 0
        self.attempt = 0
        self.counts = {}
        self.preflight = False

    # START of the attempt awaited at every simulated node (in attempt 1, all
    # but the crashed one); STOP of attempt 0 at every one.
    def count(self, what, attempt):
        key = (what, attempt)
        self.counts[key] = self.counts.get(key, 0) + 1
        if what == "start" and attempt == self.attempt and self.counts[key] == len(self.nodes) - attempt:
            self.started.set()
        if what == "stop" and attempt == 0 and self.counts[key] == len(self.nodes):
            self.stopped.set()

    async def run(self, mode):
        tmp = tempfile.mkdtemp(prefix=f"light-{self.n}-")
        self.preflight = mode == "preflight"
        env = plan_env(self.n, self.secret, self.port, self.master_port, self.spares,
                       "check" if mode == "preflight" else "off")
        env["TMPDIR"] = tmp
        t0 = time.monotonic()
        agent = subprocess.Popen([self.a.agent, "--plan-from-env", "--", "sleep", "300"], env=env, cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node0.err"), "wb"),
                                 start_new_session=True)
        cpu0 = proc_cpu(agent.pid)
        if mode != "preflight" and self.a.swarm:
            try:
                return self.run_swarm(mode, agent, env, t0, cpu0)
            finally:
                os.killpg(agent.pid, signal.SIGKILL)
                agent.wait()
                subprocess.run(["rm", "-rf", tmp])
        await asyncio.sleep(0.05)  # its listening socket
        tasks = [asyncio.create_task(node.run()) for node in self.nodes]
        try:
            await asyncio.wait_for(self.started.wait(), 300)
            out = {"rendezvous_s": time.monotonic() - t0, "retries": self.retries}
            if mode == "preflight":
                out["preflight_s"] = (max(n.starts[0] for n in self.nodes) -
                                      min(n.first_check for n in self.nodes if n.first_check))
                await asyncio.sleep(0.5)  # node 0's log goes out through its loop (agent/logger.cpp)
                said = open(os.path.join(tmp, "node0.err")).read()
                out["slow_node_named"] = f"pre-flight: node {self.n - 1} (sim{self.n - 1}" in said
                out["slow_link_named"] = f"pre-flight: node {self.n - 2} (sim{self.n - 2}" in said
                out["others_named"] = said.count("pre-flight: node ") - out["slow_node_named"] - out["slow_link_named"]
            if mode == "failfast":
                last = self.nodes[-1]
                t1 = time.monotonic()
                last.writer.write(f"FAIL kind=worker_exited attempt=0 node={last.rank} rank={last.rank} local=0 "
                                  f"time=00:00:00 code=1 class=exit\n".encode())
                await asyncio.wait_for(self.stopped.wait(), 120)
                out["failfast_s"] = max(n.stops[0] for n in self.nodes) - t1
            if mode == "spare":
                spare, victim = self.nodes[-1], self.nodes[-2]
                self.attempt, self.started = 1, asyncio.Event()
                t1 = time.monotonic()
                victim.crash()
                await asyncio.wait_for(self.started.wait(), 120)
                out["spare_s"] = spare.starts[1] - t1
            out["node0_hwm_mib"] = vm_hwm_kib(agent.pid) / 1024
            out["node0_cpu_s"] = proc_cpu(agent.pid) - cpu0
            return out
        finally:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            subprocess.run(["rm", "-rf", tmp])


    def run_swarm(self, mode, agent, env, t0, cpu0):
        """Nodes 1..N-1 as the agents' own rendezvous clients in one C++
        process (bench/rdzv_swarm.cpp): it connects at once, as this one does."""
        cmd = [self.a.swarm, "--nodes", str(self.n), "--port", str(self.port), "--run",
               env["DDP_PLAN_RUN_ID"], "--t0-ns", str(int(t0 * 1e9)), "--mode", mode,
               "--spares", str(self.spares), "--node0-pid", str(agent.pid)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=330)
        if done.returncode != 0:
            said = open(os.path.join(env["TMPDIR"], "node0.err")).read()[-3000:]
            sys.exit(f"scale_light: {' '.join(cmd)} failed: {done.stderr.strip()}\nnode 0 said:\n{said}")
        got = json.loads(done.stdout)
        out = {"rendezvous_s": got["started_s"], "simulator": "swarm", "swarm_cpu_s": got["swarm_cpu_s"]}
        out.update({k: got[k] for k in ("failfast_s", "spare_s", "stop_first_s", "stop_all_s", "start1_first_s")
                    if k in got})
        out["node0_rdzv_cpu_s"] = got["node0_rdzv_cpu_s"] - cpu0
        out["node0_hwm_mib"] = vm_hwm_kib(agent.pid) / 1024
        out["node0_cpu_s"] = proc_cpu(agent.pid) - cpu0
        return out


def vm_hwm_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def proc_cpu(pid):
    parts = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def sysctls():
    """The listen-queue limits that bound how many of N simultaneous connects
    node 0's rendezvous socket can hold before the kernel drops SYNs (the
    simulated nodes then retry, which the timings would include)."""
    out = {}
    for key in ("net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"):
        try:
            with open("/proc/sys/" + key.replace(".", "/")) as f:
                out[key] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            out[key] = None
    return out


def median(values):
    return statistics.median(values) if values else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ns", default="1024,4096,16384")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--modes", default="failfast,spare")
    p.add_argument("--agent", default=os.path.join(HERE, "..", "build", "agent", "ddp-agent"))
    p.add_argument("--out", default=os.path.join(HERE, "results", "scale-light.json"))
    p.add_argument("--swarm", default=os.path.join(HERE, "..", "build", "bench", "ddp-rdzv-swarm"),
                   help="the C++ simulator of nodes 1..N-1 for failfast and spare ('' for this script's asyncio one)")
    a = p.parse_args()
    if a.swarm and not os.access(a.swarm, os.X_OK):
        sys.exit(f"scale_light: no simulator at {a.swarm}: build the project (cmake --build build), or --swarm ''")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ns = [int(x) for x in a.ns.split(",")]
    limits = sysctls()
    somaxconn = limits["net.core.somaxconn"]
    # The kernel caps every listen backlog at somaxconn: with N nodes connecting
    # at once, a smaller cap means dropped SYNs and retries in the rendezvous time.
    if somaxconn is not None and max(ns) > somaxconn:
        print(f"scale_light: WARNING: net.core.somaxconn is {somaxconn}, below N={max(ns)}: node 0's "
              f"listen backlog is capped at {somaxconn}, so connects beyond it are dropped and retried and "
              f"the rendezvous times include that. For the published numbers, as root first: "
              f"sysctl -w net.core.somaxconn={max(ns)}", file=sys.stderr, flush=True)
    results = []
    for n in ns:
        if n + 64 > hard:
            sys.exit(f"scale_light: {n} nodes need {n + 64} open files; the hard limit is {hard}")
        for mode in a.modes.split(","):
            runs = []
            for _ in range(a.repeats):
                runs.append(asyncio.run(Sim(a, n, 1 if mode == "spare" else 0).run(mode)))
                print(f"n={n} {mode}: {runs[-1]}", flush=True)
            keys = sorted({k for r in runs for k in r})
            results.append({"n": n, "mode": mode, "runs": runs,
                            "median": {k: median([r[k] for r in runs if k in r]) for k in keys}})
    doc = {"machine": f"{platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}",
           "date": time.strftime("%Y-%m-%d"), "agent": a.agent,
           "conditions": {"sysctl": limits}, "results": results}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
