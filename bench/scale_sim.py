#!/usr/bin/python3
"""Scale by simulation: N ddp-agents on loopback, each one "node" of an N-node step.

Every node is an ddp-agent process on this machine, started the way the spank_ddp
plugin starts it (`ddp-agent --plan-from-env -- CMD`, DDP_PLAN_* variables as
write_plan() in common/ddp/wire/node_plan.cpp writes them, SLURM_DDP_SECRET shared by all),
one worker per node; node 0's agent hosts the coordinator on a free port of
127.0.0.1. Four measurements (and one optional), each repeated --repeats times
(median/min/max):

  rendezvous  worker `sh -c 'echo $$ >FILE'` (as trivial as `true`, but leaves its
              start time as the file's mtime). From just before the first agent is
              spawned: spawn of all N agents, all nodes joined (node 0's --ddp-verbose
              summary line, printed by the coordinator the moment the last JOIN
              arrives), first and last worker start, every agent exited (job done).
  late0       the same, but node 0's agent is spawned last, after nodes 1..N-1, which
              are already retrying (every 250 ms) when its coordinator starts: the burst
              of connections that meets the coordinator's accept backlog (256), its
              limit of 64 unauthenticated connections and its 5 s handshake timeout.
              Times from just before node 0's agent is spawned.
  failure     workers `sleep 300`; once all N run, SIGKILL node N-1's worker; time
              until every agent has exited (fail-fast: all workers stopped).
  cutoff      workers `sleep 300`, --heartbeat-timeout H (default 2 s); once all run,
              SIGSTOP node N-1's agent and its worker (a node that stops answering);
              time until every other agent has exited. The stopped pair is SIGKILLed
              afterwards.
  missing     (not in the default --modes) node N-1 is never started; time until every
              other agent has given up at the rendezvous timeout (--missing-rdzv-timeout,
              5 s), and node 0 must name the missing node as the root cause.
  spare       (not in the default --modes) --ddp-spares=1: node N-1 is a spare, nodes
              0..N-2 run a worker (`sleep 300` in attempt 0); once all run, node N-2
              crashes (its agent and worker SIGKILLed: its connection ends). Time until
              every worker of attempt 1 has started (the spare in node N-2's place; each
              exits at once), and until every other agent has exited 0.
  sparecut    the same, but node N-2's agent and worker are SIGSTOPped (a cut or hung
              node, noticed by the heartbeat timeout, --heartbeat-timeout).

--agent-nofile 1024 gives the agents the soft open-file limit a job step usually
inherits (node 0 holds one socket per node); by default they get this script's,
raised to the hard limit.

A run fails when an agent exits with an unexpected status (e.g. killed by a signal),
the root cause is not the injected fault, or it hangs (per-run time limits). Its
repeats at that N still run (unless it hung), and what it measured before failing
stays in the JSON marked "failed" (the start columns count runs in which every
worker had started; "missing" counts the exit times of runs whose root cause was
wrong or absent); larger N are skipped for that mode only when the rendezvous
itself failed or a run hung. The reasons are in the JSON and under the tables.

Writes JSON (--out) and prints Markdown tables. Every process started here is in a
session of its own and is SIGKILLed on exit, error or Ctrl-C; workers die with
their agent (PR_SET_PDEATHSIG) and are killed by pid as well.

usage: bench/scale_sim.py [--repeats R] [--max-n N] [--max-n-fail N] [--ns 8,16,...]
                          [--modes rendezvous,late0,failure,cutoff] [--heartbeat-timeout S]
                          [--agent PATH] [--out FILE] [--keep]
"""
import argparse
import datetime
import fcntl
import json
import os
import platform
import re
import resource
import secrets
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_NS = [8, 16, 32, 64, 128, 256, 512, 1024]
MODES = ("rendezvous", "late0", "failure", "cutoff", "missing", "spare", "sparecut")
SPARE_MODES = ("spare", "sparecut")
DEFAULT_MODES = ("rendezvous", "late0", "failure", "cutoff")

LIVE = []  # Popen objects of agents not yet reaped (cleanup kills them)
RUN_DIRS = []  # run directories not yet removed: their w.RANK files name the workers to sweep


class RunFailed(Exception):
    """One run did not reach the expected outcome; the reason is the finding."""

    def __init__(self, message, timeout=False):
        super().__init__(message)
        self.timeout = timeout  # a hang: not worth repeating at this N
        self.partial = None  # what the run measured before it went wrong
        self.all_started = False  # every worker had started: the rendezvous itself worked


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listen_counters():
    """TcpExt ListenOverflows/ListenDrops: SYNs dropped because a listen backlog was full."""
    try:
        lines = open("/proc/net/netstat").read().splitlines()
        for names, values in zip(lines[::2], lines[1::2]):
            if names.startswith("TcpExt:"):
                d = dict(zip(names.split()[1:], map(int, values.split()[1:])))
                return d.get("ListenOverflows", 0), d.get("ListenDrops", 0)
    except OSError:
        pass
    return 0, 0


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def kill_agent(p):
    if p.returncode is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # its own session; the pid is ours until reaped
        except ProcessLookupError:
            pass


def sweep_workers(rundir):
    """Workers are in process groups of their own; they die with their agent
    (PDEATHSIG), but kill any survivor by pid, checking it is ours first."""
    token = ("SCALE_SIM_DIR=" + rundir).encode()
    try:
        names = os.listdir(rundir)
    except OSError:
        return
    for name in names:
        if not name.startswith("w."):
            continue
        try:
            pid = int(open(os.path.join(rundir, name)).read().strip() or "0")
            if pid <= 1:
                continue
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            if token in env:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


def cleanup_all():
    for p in LIVE:
        kill_agent(p)
    for p in LIVE:
        try:
            p.wait(timeout=10)
        except Exception:
            pass
    LIVE.clear()
    for rundir in RUN_DIRS:
        sweep_workers(rundir)


def stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


class Sim:
    """One run: N agents, one worker each."""

    def __init__(self, a, n, mode, tmp_root):
        self.a, self.n, self.mode = a, n, mode
        self.dir = tempfile.mkdtemp(prefix=f"{mode}-{n}-", dir=tmp_root)
        RUN_DIRS.append(self.dir)
        self.procs = []
        self.pidfds = {}  # fd -> node rank
        self.exit_t = {}  # node -> monotonic time of exit
        self.rc = {}
        self.node0_err = b""
        self.marks = {}
        self.err_fd = -1
        self.hb_ms = 5000
        self.t_first = time.monotonic()
        self.node0_log = open(os.path.join(self.dir, "node0.err"), "wb") if a.keep else None

    # -- set-up ----------------------------------------------------------------
    def environments(self):
        base = {k: v for k, v in os.environ.items()
                if not (k.startswith("DDP_") or k.startswith("SLURM_") or k in (
                    "RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))}
        base.update(TMPDIR=self.dir, SCALE_SIM_DIR=self.dir, SLURM_DDP_SECRET=secrets.token_hex(32))
        rdzv_port, master_port = free_port(), free_port()
        while master_port == rdzv_port:
            master_port = free_port()
        hb_ms = 5000 if self.mode not in ("cutoff", "sparecut") else int(self.a.heartbeat_timeout * 1000)
        self.hb_ms = hb_ms
        plan = {
            "VERSION": "5", "SPARES": "0", "MIN_NODES": "0", "GROUPS": str(self.n), "HEALTH_CHECK": "", "HEALTH_CHECK_TIMEOUT_MS": "60000", "REQUEUE": "0", "REQUEUE_WAIT_MS": "60000", "HANG_TIMEOUT_MS": "0", "RUN_ID": f"{os.getpid()}.{self.mode}{self.n}", "MODE": "cpu",
            "NNODES": str(self.n), "NPROC": "1", "WORLD_SIZE": str(self.n),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(master_port), "MASTER_PORT_FIXED": "1",
            "MAX_RESTARTS": "0", "STOP_GRACE_MS": "5000", "EXPORT_IB_HCA": "0",
            "JOB_ID": str(os.getpid()), "STEP_ID": "0", "PORT_RANGE": "20000-29999",
            "RDZV_PORT": str(rdzv_port), "MASTER_INTERFACE": "",
            "RDZV_TIMEOUT_MS": str(int((self.a.missing_rdzv_timeout if self.mode == "missing"
                                        else self.a.rdzv_timeout) * 1000)),
            # default 5 s; the cut-off runs shorten it with --heartbeat-timeout (below)
            "HEARTBEAT_TIMEOUT_MS": "5000",
        }
        if self.mode in SPARE_MODES:  # node N-1 waits (the plugin's plan for --ddp-spares=1)
            plan.update(SPARES="1", GROUPS=str(self.n - 1), WORLD_SIZE=str(self.n - 1), MAX_RESTARTS="1")
        envs = []
        for node in range(self.n):
            env = dict(base)
            for k, v in plan.items():
                env["DDP_PLAN_" + k] = v
            env["DDP_PLAN_NODE_RANK"] = str(node)
            spare = self.mode in SPARE_MODES and node == self.n - 1
            env["DDP_PLAN_RANK_BASE"] = "0" if spare else str(node)
            env["DDP_PLAN_GROUP_RANK"] = str(node)
            env["DDP_PLAN_VERBOSE"] = "1" if node == 0 and self.a.verbose0 else "0"
            envs.append(env)
        return envs

    def argv(self):
        worker = 'echo $$ >"$SCALE_SIM_DIR/w.$RANK"'
        if self.mode in ("failure", "cutoff"):
            worker += "; exec sleep 300"
        if self.mode in SPARE_MODES:  # attempt 1 (after the swap): note the start, end at once
            worker = ('if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then ' + worker + '; exec sleep 300; '
                      'else echo $$ >"$SCALE_SIM_DIR/r.$RANK"; fi')
        args = [self.a.agent, "--plan-from-env"]
        if self.mode in ("cutoff", "sparecut"):
            args += ["--heartbeat-timeout", f"{self.a.heartbeat_timeout:g}"]
        return args + ["--", "/bin/sh", "-c", worker]

    # -- event handling ----------------------------------------------------------
    def on_node0_output(self, now, chunk):
        self.node0_err += chunk
        if self.node0_log:
            self.node0_log.write(f"--- {now - self.t_first:.3f} s\n".encode() + chunk)
        if "cause" not in self.marks and b"root cause" in chunk:
            self.marks["cause"] = now
        text = self.node0_err.decode(errors="replace")
        if "joined" not in self.marks and re.search(r"step \S+: attempt \d+: \d+ node\(s\)", text):
            self.marks["joined"] = now
        # keep the buffer small once the markers are found, but keep the root cause
        if "joined" in self.marks and len(self.node0_err) > 65536 and b"root cause" not in self.node0_err:
            self.node0_err = self.node0_err[-4096:]

    def pump(self, poller, timeout_s):
        """Waits up to timeout_s for events; returns after one batch."""
        events = poller.poll(max(0, int(timeout_s * 1000)))
        now = time.monotonic()
        for fd, _ in events:
            if fd == self.err_fd:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if chunk:
                    self.on_node0_output(now, chunk)
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    self.err_fd = -1
            elif fd in self.pidfds:
                node = self.pidfds.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                p = self.procs[node]
                p.wait()
                self.exit_t[node] = now
                self.rc[node] = p.returncode
                LIVE.remove(p)
        return now

    def workers_started(self):
        try:
            return sum(1 for name in os.listdir(self.dir) if name.startswith("w."))
        except OSError:
            return 0

    def worker_pid(self, rank):
        path = os.path.join(self.dir, f"w.{rank}")
        for _ in range(100):
            try:
                text = open(path).read().strip()
                if text:
                    return int(text)
            except OSError:
                pass
            time.sleep(0.01)
        raise RunFailed(f"worker {rank} wrote no pid")

    # -- the run ----------------------------------------------------------------
    def spawn(self, node, argv, env, log, poller):
        err = log
        if node == 0:
            # Node 0's stderr (the verbose summary: 2N+1 lines) comes to us through a pipe
            # made large enough that node 0 never blocks on it while we wait for a CPU.
            self.err_fd, err = os.pipe()
            try:
                fcntl.fcntl(err, fcntl.F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass
            os.set_blocking(self.err_fd, False)
            poller.register(self.err_fd, select.POLLIN)
        try:
            p = subprocess.Popen(argv, env=env, cwd=self.dir, stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=err, start_new_session=True)
        except OSError as e:
            raise RunFailed(f"cannot start agent {node} of {self.n}: {e}") from None
        finally:
            if node == 0:
                os.close(err)
        LIVE.append(p)
        self.procs[node] = p
        if self.a.agent_nofile:
            # The soft limit a job step would inherit (Slurm propagates the user's; often 1024).
            try:
                resource.prlimit(p.pid, resource.RLIMIT_NOFILE,
                                 (self.a.agent_nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
            except OSError:
                pass
        fd = os.pidfd_open(p.pid)
        self.pidfds[fd] = node
        poller.register(fd, select.POLLIN)

    def run(self):
        """Returns the run's measurements; raises RunFailed with .partial (what was
        measured before it went wrong) otherwise."""
        self.result = {"n": self.n}
        try:
            return self.measure()
        except RunFailed as e:
            waits = {k: round(v, 2) for k, v in self.run_delays().items() if v is not None}
            tail = self.node0_err.decode(errors="replace").strip().splitlines()[-6:]
            try:
                other = open(os.path.join(self.dir, "agents.log"), errors="replace").read().strip().splitlines()
            except OSError:
                other = []
            errs = [l for l in other if "error" in l or "warning" in l]
            marks = {k: round(v - self.t_first, 3) for k, v in self.marks.items()}
            detail = {"seconds_from_first_spawn": marks, "cpu_wait_of_live_agents": waits,
                      "node0_stderr_tail": tail, "other_agents_errors": len(errs),
                      "other_agents_first_errors": sorted(set(errs))[:5]}
            err = RunFailed(str(e) + " | " + json.dumps(detail), timeout=e.timeout)
            err.partial = dict(self.result, failed=str(e))
            # the rendezvous worked (or, for "missing", every agent gave up): larger N still run
            err.all_started = "workers_started_s" in self.result or "all_exited_s" in self.result
            raise err from None
        finally:
            self.teardown()

    def measure(self):
        envs = self.environments()
        argv = self.argv()
        self.log = log = open(os.path.join(self.dir, "agents.log"), "ab", buffering=0)
        poller = select.poll()
        counters0 = listen_counters()
        result = self.result
        # t0: just before the first agent is spawned (Python's own start-up is not in
        # it); in "late0" just before node 0's agent, spawned after all the others.
        order = list(range(1, self.n)) + [0] if self.mode == "late0" else \
            list(range(self.n - 1)) if self.mode == "missing" else list(range(self.n))
        self.procs = [None] * self.n
        t_first = self.t_first = time.monotonic()
        t0 = wall0 = None
        for node in order:
            if node == 0:
                t0 = time.monotonic()
                wall0 = time.time() - (time.monotonic() - t0)
            self.spawn(node, argv, envs[node], log, poller)
        result["spawn_s"] = time.monotonic() - t_first
        if self.mode == "late0":
            result["others_running_s"] = t0 - t_first  # how long nodes 1..N-1 had been retrying
        setup_deadline = t0 + self.a.rdzv_timeout + 30

        if self.mode == "missing":
            # Node N-1 never starts: every other agent must give up at the rendezvous
            # timeout, and node 0 must name the missing node.
            deadline = t0 + self.a.missing_rdzv_timeout + 30
            while self.pidfds:
                now = self.pump(poller, 0.5)
                if now > deadline:
                    raise RunFailed(f"{len(self.pidfds)} of {self.n - 1} agents still running {now - t0:.0f} s "
                                    f"after the start", timeout=True)
            self.drain(poller)
            result["exit_codes"] = self.rc_histogram()
            cause = self.root_cause_line()
            result["root_cause"] = cause[:300] if cause else None
            crashed = {node: rc for node, rc in self.rc.items() if rc < 0}
            if crashed:
                raise RunFailed(f"{len(crashed)} agents died by a signal: {self.describe_rcs(crashed)}")
            exits = [t - t0 for t in self.exit_t.values()]
            result.update(first_exit_s=min(exits), node0_exit_s=self.exit_t[0] - t0, all_exited_s=max(exits))
            if not cause or f"did not arrive: {self.n - 1}" not in cause:
                errs = sorted(set(l for l in self.node0_err.decode(errors="replace").splitlines() if "error" in l))
                raise RunFailed(f"node 0 did not name the missing node {self.n - 1}; its errors: {errs[:3]}")
        elif self.mode in ("rendezvous", "late0"):
            while self.pidfds:
                now = self.pump(poller, 0.5)
                if now > setup_deadline:
                    raise RunFailed(f"not done {now - t0:.0f} s after the start: "
                                    f"{len(self.pidfds)} of {self.n} agents still running, "
                                    f"{self.workers_started()} workers started", timeout=True)
            self.drain(poller)
            result["exit_codes"] = self.rc_histogram()
            starts = self.worker_starts(wall0)
            if len(starts) == self.n:
                result.update(joined_s=self.rel("joined", t0), first_worker_s=min(starts),
                              workers_started_s=max(starts))
            bad = {node: rc for node, rc in self.rc.items() if rc != 0}
            if bad:
                raise RunFailed(f"{len(bad)} of {self.n} agents failed: {self.describe_rcs(bad)}")
            if len(starts) != self.n:
                raise RunFailed(f"only {len(starts)} of {self.n} workers started")
            result.update(node0_exit_s=self.exit_t[0] - t0, total_s=max(self.exit_t.values()) - t0)
        elif self.mode in SPARE_MODES:
            self.measure_spare(poller, t0, wall0, setup_deadline)
        else:
            # Phase 1: every worker running.
            while self.workers_started() < self.n or (self.a.verbose0 and "joined" not in self.marks):
                now = self.pump(poller, 0.02)
                if len(self.pidfds) < self.n:
                    raise RunFailed(f"{self.n - len(self.pidfds)} agents exited before every worker ran: "
                                    f"{self.describe_rcs(self.rc)}")
                if now > setup_deadline:
                    raise RunFailed(f"only {self.workers_started()} of {self.n} workers started "
                                    f"after {now - t0:.0f} s", timeout=True)
            starts = self.worker_starts(wall0)
            victim = self.n - 1
            wpid = self.worker_pid(victim)
            self.pump(poller, 0.2)  # let the last START/heartbeats settle
            if len(self.pidfds) < self.n:
                raise RunFailed(f"{self.n - len(self.pidfds)} agents exited before the fault: "
                                f"{self.describe_rcs(self.rc)}")
            result.update(joined_s=self.rel("joined", t0), workers_started_s=max(starts))
            result.update(self.run_delays())  # CPU wait of the agents up to the fault
            others = [node for node in range(self.n) if node != victim] if self.mode == "cutoff" \
                else list(range(self.n))
            # Phase 2: the fault, then every (other) agent gone.
            t_fault = time.monotonic()
            if self.mode == "failure":
                os.kill(wpid, signal.SIGKILL)
            else:
                os.kill(self.procs[victim].pid, signal.SIGSTOP)
                os.kill(wpid, signal.SIGSTOP)
            deadline = t_fault + self.hb_ms / 1000 + 20
            while any(node not in self.exit_t for node in others):
                now = self.pump(poller, 0.5)
                if now > deadline:
                    left = [node for node in others if node not in self.exit_t]
                    raise RunFailed(f"{len(left)} agents still running {now - t_fault:.0f} s after the fault",
                                    timeout=True)
            self.drain(poller)
            cause = self.root_cause_line()
            result["root_cause"] = cause
            result["exit_codes"] = self.rc_histogram()
            crashed = {node: rc for node, rc in self.rc.items() if rc < 0}
            if crashed:
                raise RunFailed(f"{len(crashed)} agents died by a signal: {self.describe_rcs(crashed)}")
            expect = f"on node {victim} " if self.mode == "failure" else f"node {victim} ("
            if not cause or expect not in cause or (self.mode == "cutoff" and "no heartbeat" not in cause):
                raise RunFailed(f"unexpected root cause: {cause!r}")
            exits = [self.exit_t[node] - t_fault for node in others]
            result.update(first_exit_s=min(exits), all_exited_s=max(exits),
                          node0_exit_s=self.exit_t[0] - t_fault, node0_rc=self.rc[0])
        counters1 = listen_counters()
        result["listen_overflows"] = counters1[0] - counters0[0]
        result["listen_drops"] = counters1[1] - counters0[1]
        text = self.node0_err.decode(errors="replace")
        # Node 0 logs the first few of each kind one by one, then summaries with counts
        # ("N more connection(s) ... (12 shed, 3 timed out)"). refused_pending: connections
        # shed at the limit of unauthenticated ones (shedding is how node 0 refuses them).
        summaries = re.findall(r"rendezvous: \d+ more connection\(s\)[^(]*\(([^)]*)\)", text)
        def summed(kind):
            return sum(int(n) for counts in summaries for n in re.findall(r"(\d+) " + kind, counts))
        result["refused_pending"] = text.count("rendezvous: shed ") + summed("shed")
        result["handshake_timeouts"] = text.count("no authentication within") + summed("timed out")
        return result

    def measure_spare(self, poller, t0, wall0, setup_deadline):
        """--ddp-spares=1: node N-2 crashes or stops; the spare (N-1) takes its place."""
        result, groups = self.result, self.n - 1
        while self.workers_started() < groups:
            now = self.pump(poller, 0.02)
            if len(self.pidfds) < self.n:
                raise RunFailed(f"{self.n - len(self.pidfds)} agents exited before every worker ran: "
                                f"{self.describe_rcs(self.rc)}")
            if now > setup_deadline:
                raise RunFailed(f"only {self.workers_started()} of {groups} workers started "
                                f"after {now - t0:.0f} s", timeout=True)
        result["workers_started_s"] = max(self.worker_starts(wall0))
        victim = self.n - 2
        wpid = self.worker_pid(victim)
        self.pump(poller, 0.2)
        others = [node for node in range(self.n) if node != victim]
        t_fault, wall_fault = time.monotonic(), time.time()
        sig = signal.SIGKILL if self.mode == "spare" else signal.SIGSTOP
        os.kill(self.procs[victim].pid, sig)
        os.kill(wpid, sig)
        deadline = t_fault + self.hb_ms / 1000 + 30
        while any(node not in self.exit_t for node in others):
            now = self.pump(poller, 0.5)
            if now > deadline:
                left = [node for node in others if node not in self.exit_t]
                raise RunFailed(f"{len(left)} agents still running {now - t_fault:.0f} s after the fault",
                                timeout=True)
        self.drain(poller)
        result["exit_codes"] = self.rc_histogram()
        bad = {node: rc for node, rc in self.rc.items() if node != victim and rc != 0}
        if bad:
            raise RunFailed(f"{len(bad)} agents failed: {self.describe_rcs(bad)}; "
                            f"root cause {self.root_cause_line()!r}")
        text = self.node0_err.decode(errors="replace")
        if f"spare node {self.n - 1} " not in text or f"takes over group {victim} " not in text:
            raise RunFailed(f"node 0 did not say that spare node {self.n - 1} took over group {victim}")
        again = [os.stat(os.path.join(self.dir, name)).st_mtime_ns / 1e9 - wall_fault
                 for name in os.listdir(self.dir) if name.startswith("r.")]
        if len(again) != groups:
            raise RunFailed(f"{len(again)} of {groups} workers started again")
        exits = [self.exit_t[node] - t_fault for node in others]
        result.update(first_again_s=min(again), running_again_s=max(again), all_exited_s=max(exits))

    def teardown(self):
        procs = [p for p in self.procs if p is not None]
        for p in procs:
            kill_agent(p)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if p in LIVE:
                LIVE.remove(p)
        for fd in list(self.pidfds):
            os.close(fd)
        self.pidfds.clear()
        if self.err_fd >= 0:
            os.close(self.err_fd)
            self.err_fd = -1
        sweep_workers(self.dir)
        if getattr(self, "log", None):
            self.log.close()
        if self.node0_log:
            self.node0_log.close()
        if not self.a.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
            RUN_DIRS.remove(self.dir)

    def run_delays(self):
        """Seconds each live agent has spent waiting for a CPU (schedstat run_delay):
        how much the 2 cores are oversubscribed, as node 0 and the worst agent saw it."""
        delays = {}
        for node, p in enumerate(self.procs):
            if p is None or p.returncode is not None or node in self.exit_t:
                continue
            try:
                delays[node] = int(open(f"/proc/{p.pid}/schedstat").read().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                pass
        if not delays:
            return {}
        return {"node0_cpu_wait_s": delays.get(0), "max_agent_cpu_wait_s": max(delays.values()),
                "median_agent_cpu_wait_s": statistics.median(delays.values()),
                "since_first_spawn_s": time.monotonic() - self.t_first}

    def rc_histogram(self):
        h = {}
        for rc in self.rc.values():
            h[str(rc)] = h.get(str(rc), 0) + 1
        return h

    @staticmethod
    def describe_rcs(rcs):
        def one(rc):
            if rc < 0:
                try:
                    return "killed by " + signal.Signals(-rc).name
                except ValueError:
                    return f"killed by signal {-rc}"
            return f"exit {rc}"
        parts = [f"node {node} {one(rc)}" for node, rc in sorted(rcs.items())[:3]]
        return ", ".join(parts) + (", ..." if len(rcs) > 3 else "")

    def drain(self, poller):
        while self.err_fd >= 0:
            try:
                chunk = os.read(self.err_fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.on_node0_output(time.monotonic(), chunk)

    def rel(self, mark, t0):
        return self.marks[mark] - t0 if mark in self.marks else None

    def worker_starts(self, wall0):
        out = []
        for name in os.listdir(self.dir):
            if name.startswith("w."):
                out.append(os.stat(os.path.join(self.dir, name)).st_mtime_ns / 1e9 - wall0)
        return out

    def root_cause_line(self):
        for line in self.node0_err.decode(errors="replace").splitlines():
            if "root cause:" in line:
                return line.split("root cause:", 1)[1].strip()
        return None


def host_info():
    mem = {}
    for line in open("/proc/meminfo"):
        k, v = line.split(":", 1)
        mem[k] = int(v.split()[0]) // 1024
    return {"hostname": platform.node(), "cores": os.cpu_count(), "mem_total_mib": mem.get("MemTotal"),
            "mem_available_mib": mem.get("MemAvailable"), "loadavg_at_start": os.getloadavg(),
            "kernel": platform.release(), "somaxconn": int(open("/proc/sys/net/core/somaxconn").read())}


METRICS = {
    "rendezvous": ["spawn_s", "joined_s", "first_worker_s", "workers_started_s", "node0_exit_s",
                   "total_s", "refused_pending", "handshake_timeouts", "listen_overflows"],
    "late0": ["spawn_s", "others_running_s", "joined_s", "first_worker_s", "workers_started_s", "node0_exit_s",
              "total_s", "refused_pending", "handshake_timeouts", "listen_overflows"],
    "failure": ["workers_started_s", "first_exit_s", "node0_exit_s", "all_exited_s", "node0_cpu_wait_s"],
    "cutoff": ["workers_started_s", "first_exit_s", "node0_exit_s", "all_exited_s", "node0_cpu_wait_s"],
    "missing": ["spawn_s", "first_exit_s", "node0_exit_s", "all_exited_s"],
    "spare": ["workers_started_s", "first_again_s", "running_again_s", "all_exited_s"],
    "sparecut": ["workers_started_s", "first_again_s", "running_again_s", "all_exited_s"],
}


def fmt(s, digits=2):
    if not s:
        return "-"
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def markdown(result):
    lines = []
    r = result
    lines.append(f"# Scale by simulation: N ddp-agents on loopback, 1 worker each\n")
    h = r["host"]
    lines.append(f"Measured {r['measured']} on {h['hostname']} ({h['cores']} cores, "
                 f"{h['mem_total_mib'] // 1024} GiB, load {h['loadavg_at_start'][0]:.2f} at start), "
                 f"{r['agent_version']}; {r['settings']['repeats']} runs per N, median (min-max) in seconds. "
                 f"Command: `{r['command']}`.\n")
    sections = {
        "rendezvous": ("Rendezvous (worker: `sh -c 'echo $$ >FILE'`; seconds from just before the first agent "
                       "is spawned)",
                       ["N", "spawn all", "all joined", "all workers started", "job done (all exited)",
                        "ok", "shed (pending>64)", "SYN drops"],
                       lambda s: [fmt(s.get("spawn_s")), fmt(s.get("joined_s")), fmt(s.get("workers_started_s")),
                                  fmt(s.get("total_s")), None,
                                  fmt(s.get("refused_pending"), 0), fmt(s.get("listen_overflows"), 0)]),
        "late0": ("Rendezvous, node 0 last (nodes 1..N-1 spawned first and retrying; seconds from just "
                  "before node 0's agent is spawned)",
                  ["N", "others retrying for", "all joined", "all workers started", "job done (all exited)",
                   "ok", "shed (pending>64)", "handshake timeouts", "SYN drops"],
                  lambda s: [fmt(s.get("others_running_s")), fmt(s.get("joined_s")),
                             fmt(s.get("workers_started_s")), fmt(s.get("total_s")), None,
                             fmt(s.get("refused_pending"), 0), fmt(s.get("handshake_timeouts"), 0),
                             fmt(s.get("listen_overflows"), 0)]),
        "failure": ("Failure detection (worker on node N-1 SIGKILLed; heartbeat timeout 5 s; seconds from "
                    "the kill)",
                    ["N", "first agent exited", "node 0 exited", "all agents exited", "ok"],
                    lambda s: [fmt(s.get("first_exit_s")), fmt(s.get("node0_exit_s")),
                               fmt(s.get("all_exited_s")), None]),
        "cutoff": (f"Node cut-off (agent + worker of node N-1 SIGSTOPped; --heartbeat-timeout "
                   f"{r['settings']['heartbeat_timeout_s']:g} s; seconds from the stop)",
                   ["N", "first agent exited", "node 0 exited", "all other agents exited", "ok"],
                   lambda s: [fmt(s.get("first_exit_s")), fmt(s.get("node0_exit_s")),
                              fmt(s.get("all_exited_s")), None]),
        "missing": (f"Node never arrives (node N-1 not started; rendezvous timeout "
                    f"{r['settings']['missing_rdzv_timeout_s']:g} s; seconds from just before node 0 is spawned)",
                    ["N", "first agent exited", "node 0 exited", "all agents exited", "ok"],
                    lambda s: [fmt(s.get("first_exit_s")), fmt(s.get("node0_exit_s")),
                               fmt(s.get("all_exited_s")), None]),
        "spare": ("Spare (--ddp-spares=1; node N-2's agent and worker SIGKILLed, node N-1 takes its place; "
                  "seconds from the kill)",
                  ["N", "first worker again", "all N-1 workers again", "all other agents exited", "ok"],
                  lambda s: [fmt(s.get("first_again_s")), fmt(s.get("running_again_s")),
                             fmt(s.get("all_exited_s")), None]),
        "sparecut": (f"Spare after a cut-off (--ddp-spares=1; node N-2's agent and worker SIGSTOPped; "
                     f"--heartbeat-timeout {r['settings']['heartbeat_timeout_s']:g} s; seconds from the stop)",
                     ["N", "first worker again", "all N-1 workers again", "all other agents exited", "ok"],
                     lambda s: [fmt(s.get("first_again_s")), fmt(s.get("running_again_s")),
                                fmt(s.get("all_exited_s")), None]),
    }
    for mode in MODES:
        entries = r["results"].get(mode)
        if not entries:
            continue
        title, head, cells = sections[mode]
        lines.append(f"## {title}\n")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for e in entries:
            row = cells(e["stats"])
            row = [f"{e['ok']}/{e['runs']}" if c is None else c for c in row]
            lines.append(f"| {e['n']} | " + " | ".join(row) + " |")
        for e in entries:
            for err in e.get("errors", []):
                lines.append(f"\nN={e['n']}: **failed** {err[:700]}")
        if r["stopped"].get(mode):
            lines.append(f"\nStopped before larger N: {r['stopped'][mode]}")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent", default=os.path.join(ROOT, "build", "agent", "ddp-agent"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ns", default=",".join(map(str, DEFAULT_NS)), help="node counts, comma-separated")
    ap.add_argument("--max-n", type=int, default=1024, help="largest N (rendezvous; bounds the others too)")
    ap.add_argument("--max-n-fail", type=int, default=256, help="largest N for the failure and cut-off runs")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help=f"of {','.join(MODES)} (default: all but missing)")
    ap.add_argument("--missing-rdzv-timeout", type=float, default=5.0,
                    help="seconds: the rendezvous timeout of the 'missing' runs")
    ap.add_argument("--heartbeat-timeout", type=float, default=2.0, help="seconds, for the cut-off runs")
    ap.add_argument("--rdzv-timeout", type=float, default=60.0, help="seconds (the plan's; agent default 60)")
    ap.add_argument("--agent-nofile", type=int, default=0,
                    help="soft RLIMIT_NOFILE for the agents (default: this script's, raised to the hard limit); "
                         "e.g. 1024, the usual user default that Slurm propagates to job steps")
    ap.add_argument("--no-verbose", dest="verbose0", action="store_false",
                    help="no --ddp-verbose on node 0 (then no 'all joined' time)")
    ap.add_argument("--budget", type=float, default=600.0,
                    help="seconds; no new (N, mode) is begun after this much time")
    ap.add_argument("--tmp", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
                    help="where the run directories go (agents' TMPDIR, worker files; default /dev/shm: "
                         "memory, so the disk under CI load does not stall the agents)")
    ap.add_argument("--keep", action="store_true", help="keep the run directories (logs, worker files)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "scale.json"))
    a = ap.parse_args()
    a.agent = os.path.abspath(a.agent)
    if not os.access(a.agent, os.X_OK):
        sys.exit(f"scale_sim: no ddp-agent at {a.agent} (build first, or give --agent)")
    ns = sorted({int(x) for x in a.ns.split(",") if x.strip()})
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            sys.exit(f"scale_sim: unknown mode {m}; choose from {','.join(MODES)}")
    nofile = raise_nofile()  # node 0 holds a socket per node, this script a pidfd per agent

    def on_term(sig, frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background

    started = time.monotonic()
    result = {
        "benchmark": "scale_sim",
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": ("bench/scale_sim.py " + " ".join(sys.argv[1:])).strip(),
        "host": host_info(),
        "agent": a.agent,
        "agent_version": subprocess.run([a.agent, "--version"], capture_output=True, text=True).stdout.strip(),
        "settings": {"repeats": a.repeats, "ns": ns, "max_n": a.max_n, "max_n_fail": a.max_n_fail,
                     "modes": modes, "heartbeat_timeout_s": a.heartbeat_timeout,
                     "missing_rdzv_timeout_s": a.missing_rdzv_timeout,
                     "default_heartbeat_timeout_s": 5.0, "rdzv_timeout_s": a.rdzv_timeout,
                     "stop_grace_s": 5.0, "node0_verbose": a.verbose0, "nofile_limit": list(nofile),
                     "agent_nofile": a.agent_nofile or nofile[0]},
        "results": {m: [] for m in modes},
        "stopped": {},
    }
    tmp_root = tempfile.mkdtemp(prefix="scale-sim-", dir=a.tmp)
    interrupted = None
    try:
        for n in ns:
            for mode in modes:
                limit = a.max_n if mode in ("rendezvous", "late0") else min(a.max_n, a.max_n_fail)
                if n > limit or mode in result["stopped"]:
                    continue
                if time.monotonic() - started > a.budget:
                    result["stopped"][mode] = f"time budget of {a.budget:g} s spent before N={n}"
                    continue
                entry = {"n": n, "runs": 0, "ok": 0, "runs_data": [], "errors": []}
                result["results"][mode].append(entry)
                for i in range(a.repeats):
                    entry["runs"] += 1
                    try:
                        r = Sim(a, n, mode, tmp_root).run()
                        entry["ok"] += 1
                        entry["runs_data"].append(r)
                        show = {k: round(v, 3) for k, v in r.items()
                                if isinstance(v, float) and k in METRICS[mode]}
                        print(f"scale_sim: {mode} N={n} run {i + 1}: {show}", file=sys.stderr, flush=True)
                    except RunFailed as e:
                        # Measured so far (e.g. every worker started, then node 0 crashed) is kept,
                        # marked failed; the other repeats still run (how often it fails is the
                        # finding) unless it hung. Larger N are not tried when the rendezvous
                        # itself failed or hung.
                        entry["errors"].append(f"run {i + 1}: {e}")
                        if e.partial:
                            entry["runs_data"].append(e.partial)
                        print(f"scale_sim: {mode} N={n} run {i + 1} FAILED: {e}", file=sys.stderr, flush=True)
                        if e.timeout or not e.all_started:
                            result["stopped"][mode] = f"N={n}: {str(e).split(' | ')[0]}"
                        if e.timeout:
                            break
                    finally:
                        entry["stats"] = {k: stats([r.get(k) for r in entry["runs_data"]]) for k in METRICS[mode]}
    except KeyboardInterrupt as e:
        interrupted = str(e) or "Ctrl-C"
        result["interrupted"] = interrupted
    finally:
        cleanup_all()
        if not a.keep:
            shutil.rmtree(tmp_root, ignore_errors=True)
    result["elapsed_s"] = time.monotonic() - started
    if a.keep:
        result["run_dirs"] = tmp_root
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print(markdown(result))
    print(f"\nscale_sim: {result['elapsed_s']:.0f} s; wrote {a.out}", file=sys.stderr)
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
