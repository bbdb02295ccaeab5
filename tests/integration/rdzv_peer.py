#!/usr/bin/python3
"""A hostile peer of node 0's rendezvous port, for the attack tests.

  rdzv_peer.py malformed HOST PORT
      One connection per malformed input (oversized lines, NUL bytes, CRLF, bad
      %-escapes, unknown verbs, too many fields, ...); prints "NAME: closed" when
      the coordinator closed that connection within 10 s, "NAME: open" if not.
  rdzv_peer.py flood HOST PORT --idle N [--slow M] [--source ADDR] [--reopen-for S]
      N connections that never send a byte and M that send a partial line one
      byte every 0.5 s (slowloris). Prints "ready" once all are connected, then,
      when every one has been closed by the coordinator (or --limit passed), one
      JSON line: how many were opened and closed, and the seconds each lived.
      --reopen-for S: for S seconds, every closed connection is opened again at
      once (a flood that never lets go); the JSON then counts all of them.
  rdzv_peer.py stream HOST PORT [--kind lines|bytes] [--seconds S] [--source ADDR]
      For S seconds, as fast as it can, short lines (`yes | nc`) or bytes
      without a newline, a new connection each time node 0 closes one; then
      one JSON line: connections opened, bytes node 0 took.
  rdzv_peer.py replay HOST_A PORT_A SECRET_A HOST_B PORT_B NODE
      Makes a genuine RESPONSE with job A's secret for node NODE over A's own
      challenge, then presents it: to A on a new connection (new challenge), to
      job B, to A on its own connection (accepted by the MAC; refused only because
      that node has joined), and A's secret over B's fresh challenge; last, a
      RESPONSE with A's secret from an agent of the previous protocol version.
      One line each: "CASE: <the coordinator's answer>".
  rdzv_peer.py squat PORT RUN --mode refuse|relay [--to HOST:PORT,...] [--seconds S]
      Another user's process that took a rendezvous candidate port before the
      step started (bound on every address). refuse: answers each agent as a
      rendezvous of RUN would, up to a REFUSED without node 0's proof. relay:
      passes each agent's connection on to the first of --to that answers as
      RUN's rendezvous (the CHALLENGE to the agent, its RESPONSE to node 0,
      node 0's answer back), adding lines of its own after them: a forged
      `STOPPED unhealthy` toward node 0, a forged START toward the agent. Prints "ready" once
      listening, then one line per connection, until S seconds have passed.

  rdzv_peer.py checkflood [--keep N] [--seconds S]
      Another user on a node during --ddp-preflight: waits for the first new
      listening port of the kernel's range (the agent's check port, opened
      before its JOIN), then, until that port closes or S seconds pass, keeps
      opening connections to it that send nothing, N open at a time (each new
      one after the oldest is closed). Prints "ready", then one JSON line.

The proofs are the documented ones (common/ddp/wire/rdzv_auth.hpp; protocol
1-8's in rdzv_protocol.hpp; the messages in rdzv_messages.hpp):
HMAC-SHA256(secret as text, "slurm-ddp rdzv v2 client-mac run=R node=N snonce=S cnonce=C addr=A port=P"),
A and P node 0's address and port as the agent connected to them.
"""
import argparse
import hashlib
import hmac
import json
import secrets
import selectors
import socket
import sys
import time


def connect(host, port, source=None, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect((host, port))
    return s


def read_line(s, timeout=10):
    s.settimeout(timeout)
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = s.recv(1)
        except (ConnectionResetError, socket.timeout):
            return data.decode(errors="replace") or "<eof>"
        if not chunk:
            return data.decode(errors="replace") or "<eof>"
        data += chunk
    return data[:-1].decode(errors="replace")


def closed_within(s, seconds):
    """True once the coordinator closes the connection (EOF or reset)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if s.recv(65536) == b"":
                return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def send_all(s, data):
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while we were still sending: what an oversized line should get


def fields(line):
    parts = line.split(" ")
    return parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)


FIRST_SEALED_PROTOCOL = 9  # proofs bound to node 0's address and port, lines sealed


def client_mac(secret, run, node, snonce, cnonce, at=None):
    """The client's proof; `at`: (node 0's address, port) from protocol 9 on."""
    if at is None:
        text = f"slurm-ddp rdzv v1 client-mac run={run} node={node} snonce={snonce} cnonce={cnonce}"
    else:
        text = (f"slurm-ddp rdzv v2 client-mac run={run} node={node} snonce={snonce} cnonce={cnonce} "
                f"addr={at[0]} port={at[1]}")
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def response(secret, run, node, snonce, version, at=None):
    """The RESPONSE an agent of protocol `version` (the CHALLENGE's) writes,
    to node 0 at `at` (address, port); None: an agent of protocol 3, whose
    RESPONSE says neither version nor release."""
    cnonce = secrets.token_hex(32)
    sealed = version is not None and int(version) >= FIRST_SEALED_PROTOCOL
    mac = client_mac(secret, run, node, snonce, cnonce, at if sealed else None)
    tail = "" if version is None else f" version={version} release=peer"
    return f"RESPONSE node={node} cnonce={cnonce} mac={mac}{tail}\n".encode()


def challenge(s):
    """The CHALLENGE's run id, nonce and protocol version (from protocol 5 in
    `protocol`; `version` then says 3, for agents of protocol 3)."""
    line = read_line(s)
    verb, f = fields(line)
    if verb != "CHALLENGE":
        sys.exit(f"expected a CHALLENGE, got {line!r}")
    return f["run"], f["nonce"], f.get("protocol", f["version"])


MALFORMED = [
    ("oversized-no-newline", b"A" * (16 * 1024 + 100)),
    ("oversized-with-newline", b"JOIN x=" + b"a" * (1 << 20) + b"\n"),
    ("nul-byte", b"RESPONSE node=1\0 cnonce=x\n"),
    ("crlf", b"RESPONSE node=1\r\n"),
    ("bad-escape", b"RESPONSE node=%4 mac=%zz\n"),
    ("unknown-verb", b"HELLO there=1\n"),
    ("join-before-auth", b"JOIN version=1 nproc=1\n"),
    ("too-many-fields", b"RESPONSE" + b"".join(b" k%d=1" % i for i in range(65)) + b"\n"),
    ("response-bad-fields", b"RESPONSE node=99999999999999999999 cnonce=ab mac=cd\n"),
    ("empty-line", b"\n"),
]


def cmd_malformed(a):
    for name, data in MALFORMED:
        s = connect(a.host, a.port)
        read_line(s)  # the CHALLENGE
        send_all(s, data)
        print(f"{name}: {'closed' if closed_within(s, 10) else 'open'}", flush=True)
        s.close()
    # A RESPONSE sent before the challenge was read (it cannot know the nonce).
    s = connect(a.host, a.port)
    send_all(s, b"RESPONSE node=1 cnonce=" + b"ab" * 32 + b" mac=" + b"00" * 32 + b"\n")
    answer = ""
    while not answer.startswith("REFUSED") and answer != "<eof>":
        answer = read_line(s)
    print(f"response-before-challenge: {answer}; {'closed' if closed_within(s, 10) else 'open'}", flush=True)
    s.close()


def cmd_flood(a):
    sel = selectors.DefaultSelector()
    opened = {}  # socket -> (kind, open time)
    lifetimes, refused = [], 0
    slow_line = b"RESPONSE node=1 cnonce="

    def open_one(kind):
        nonlocal refused
        try:
            s = connect(a.host, a.port, a.source, timeout=10)
        except OSError:
            refused += 1
            return
        s.setblocking(False)
        opened[s] = (kind, time.monotonic(), 0)
        sel.register(s, selectors.EVENT_READ)

    for _ in range(a.idle):
        open_one("idle")
    for _ in range(a.slow):
        open_one("slow")
    total = a.idle + a.slow
    print("ready", flush=True)
    start = time.monotonic()
    reopen_until = start + a.reopen_for
    next_byte = start
    while opened and time.monotonic() - start < a.limit:
        now = time.monotonic()
        if now >= next_byte:  # the slow ones: one more byte each, never the newline
            next_byte = now + 0.5
            for s, (kind, t0, sent) in list(opened.items()):
                if kind == "slow":
                    try:
                        s.send(slow_line[sent % len(slow_line):][:1])
                        opened[s] = (kind, t0, sent + 1)
                    except OSError:
                        pass
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                continue  # the CHALLENGE: ignored
            kind, t0, _ = opened.pop(s)
            lifetimes.append(time.monotonic() - t0)
            sel.unregister(s)
            s.close()
            if time.monotonic() < reopen_until:
                open_one(kind)
                total += 1
    for s in opened:
        s.close()
    print(json.dumps({"opened": total, "refused_at_connect": refused, "closed_by_server": len(lifetimes),
                      "still_open": len(opened), "max_life_s": round(max(lifetimes, default=0), 2),
                      "min_life_s": round(min(lifetimes, default=0), 2)}), flush=True)


def cmd_replay(a):
    # Job A's genuine response over A's challenge on connection 1.
    s1 = connect(a.host_a, a.port_a)
    run_a, nonce1, version = challenge(s1)
    at_a = (a.host_a, a.port_a)
    genuine = response(a.secret_a, run_a, a.node, nonce1, version, at_a)
    # 1. Replayed on a new connection to the same job: a new challenge.
    s2 = connect(a.host_a, a.port_a)
    challenge(s2)
    s2.sendall(genuine)
    print("replayed-new-connection:", read_line(s2), flush=True)
    # 2. Replayed to another job.
    s3 = connect(a.host_b, a.port_b)
    run_b, _, _ = challenge(s3)
    s3.sendall(genuine)
    print("replayed-other-job:", read_line(s3), flush=True)
    # 3. Job A's secret over job B's fresh challenge, as A's run and as B's.
    for run in (run_a, run_b):
        s4 = connect(a.host_b, a.port_b)
        _, nonce4, _ = challenge(s4)
        s4.sendall(response(a.secret_a, run, a.node, nonce4, version, (a.host_b, a.port_b)))
        print(f"other-secret-{'own-run' if run == run_a else 'their-run'}:", read_line(s4), flush=True)
    # 4. The right secret from an agent of another protocol version (a node
    # left behind by a rolling upgrade): refused, naming both versions.
    s5 = connect(a.host_a, a.port_a)
    _, nonce5, _ = challenge(s5)
    s5.sendall(response(a.secret_a, run_a, a.node, nonce5, int(version) - 1))
    print("other-version:", read_line(s5), flush=True)
    # 5. The same from an agent of protocol 3 (the older release): no version at all.
    s6 = connect(a.host_a, a.port_a)
    _, nonce6, _ = challenge(s6)
    s6.sendall(response(a.secret_a, run_a, a.node, nonce6, None))
    print("protocol-3:", read_line(s6), flush=True)
    # 6. The genuine one where it belongs: the MAC verifies (this node has joined).
    s1.sendall(genuine)
    print("genuine:", read_line(s1), flush=True)


def cmd_squat(a):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", a.port))
    listener.listen(16)
    listener.settimeout(0.2)
    print("ready", flush=True)
    end = time.monotonic() + a.seconds
    n = 0
    while time.monotonic() < end:
        try:
            agent, _ = listener.accept()
        except socket.timeout:
            continue
        n += 1
        try:
            print(f"connection {n}: " + (squat_relay(agent, a) if a.mode == "relay" else squat_refuse(agent, a)),
                  flush=True)
        except OSError as e:
            print(f"connection {n}: {e}", flush=True)
        agent.close()


def squat_refuse(agent, a):
    agent.sendall(f"CHALLENGE version=3 protocol={FIRST_SEALED_PROTOCOL} release=0.4.0 run={a.run} "
                  f"nonce={secrets.token_hex(32)}\n".encode())
    answer = read_line(agent, 5)
    agent.sendall(b"REFUSED reason=node%20not%20in%20this%20step\n")
    return f"answered {answer.split(' ')[0]} with REFUSED; then {read_line(agent, 5)}"


def rendezvous_behind(a):
    """A connection to the first of --to that challenges as RUN's rendezvous
    (node 0's may start listening after an agent knocked here), and its CHALLENGE."""
    end = time.monotonic() + 5
    while time.monotonic() < end:
        for target in a.to.split(","):
            host, port = target.rsplit(":", 1)
            try:
                node0 = connect(host, int(port), timeout=2)
            except OSError:
                continue
            challenge_line = read_line(node0, 2)
            if f" run={a.run} " in challenge_line:
                return target, node0, challenge_line
            node0.close()
        time.sleep(0.1)
    return None, None, None


def squat_relay(agent, a):
    target, node0, challenge_line = rendezvous_behind(a)
    if node0 is not None:
        agent.sendall(challenge_line.encode() + b"\n")
        answer = read_line(agent, 5)
        node0.sendall(answer.encode() + b"\n")
        node0.sendall(b"STOPPED attempt=0 unhealthy=forged%20by%20the%20squatter\n")
        said = read_line(node0, 5)
        agent.sendall(said.encode() + b"\n")
        agent.sendall(b"START attempt=0 master_addr=10.99.99.99 master_port=4444 counts=1 groups=0\n")
        node0.close()
        return f"relayed to {target}: agent said {answer.split(' ')[0]}, node 0 said {said[:40]}; " \
               f"then the agent: {read_line(agent, 5)}"
    return "no rendezvous of the run behind any --to"


def listening_ports():
    """Ports with a socket in LISTEN (IPv4) in this network namespace."""
    ports = set()
    with open("/proc/net/tcp") as f:
        for row in f.readlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if state == "0A":
                ports.add(int(local.split(":")[1], 16))
    return ports


def cmd_checkflood(a):
    before = listening_ports()
    print("ready", flush=True)
    end = time.monotonic() + a.seconds
    port = None
    while port is None and time.monotonic() < end:
        new = [p for p in listening_ports() - before if p >= 32768]
        port = min(new) if new else None
        time.sleep(0.005)
    opened, held, turn = 0, [], 0
    while port is not None and time.monotonic() < end and (turn % 50 or port in listening_ports()):
        turn += 1
        try:
            held.append(connect("127.0.0.1", port, timeout=1))
            opened += 1
        except OSError:
            pass
        while len(held) > a.keep:
            held.pop(0).close()
        time.sleep(0.002)
    for s in held:
        s.close()
    print(json.dumps({"port": port, "opened": opened}), flush=True)


def cmd_stream(a):
    """As fast as it can, for a.seconds: short lines (`yes | nc`) or bytes
    without a newline, each connection until node 0 closes it, then a new one.
    Prints one JSON line: connections opened, bytes taken by node 0."""
    chunk = b"y\n" * 32768 if a.kind == "lines" else b"A" * 65536
    end = time.monotonic() + a.seconds
    connections = refused = taken = 0
    while time.monotonic() < end:
        try:
            s = connect(a.host, a.port, a.source, timeout=2)
        except OSError:
            refused += 1
            time.sleep(0.01)
            continue
        connections += 1
        s.settimeout(1)
        try:
            while time.monotonic() < end:
                taken += s.send(chunk)
        except OSError:
            pass  # closed by node 0, or it stopped taking: a new connection
        s.close()
    print(json.dumps({"kind": a.kind, "connections": connections, "refused_at_connect": refused,
                      "bytes_taken": taken}), flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("malformed")
    m.add_argument("host")
    m.add_argument("port", type=int)
    f = sub.add_parser("flood")
    f.add_argument("host")
    f.add_argument("port", type=int)
    f.add_argument("--idle", type=int, default=200)
    f.add_argument("--slow", type=int, default=0)
    f.add_argument("--source")
    f.add_argument("--reopen-for", type=float, default=0)
    f.add_argument("--limit", type=float, default=120)
    st = sub.add_parser("stream")
    st.add_argument("host")
    st.add_argument("port", type=int)
    st.add_argument("--kind", choices=("lines", "bytes"), default="lines")
    st.add_argument("--seconds", type=float, default=15)
    st.add_argument("--source")
    r = sub.add_parser("replay")
    r.add_argument("host_a")
    r.add_argument("port_a", type=int)
    r.add_argument("secret_a")
    r.add_argument("host_b")
    r.add_argument("port_b", type=int)
    r.add_argument("node", type=int)
    q = sub.add_parser("squat")
    q.add_argument("port", type=int)
    q.add_argument("run")
    q.add_argument("--mode", choices=("refuse", "relay"), required=True)
    q.add_argument("--to", default="")
    q.add_argument("--seconds", type=float, default=60)
    c = sub.add_parser("checkflood")
    c.add_argument("--keep", type=int, default=12)
    c.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    {"malformed": cmd_malformed, "flood": cmd_flood, "stream": cmd_stream, "replay": cmd_replay,
     "squat": cmd_squat, "checkflood": cmd_checkflood}[a.cmd](a)


if __name__ == "__main__":
    main()
