#!/usr/bin/python3
"""Runs the Python snippets of the documents that users copy into their scripts.

Usage: doc_snippets.py SOURCE_DIR               run every snippet, with and without its variables
       doc_snippets.py SOURCE_DIR --print NAME  print NAME's program (the cluster test runs it under srun)

A snippet is the code block after a line `<!-- snippet: NAME -->` in a
Markdown file (indented by four spaces or fenced); the marker stays put when
the text around it is edited, so what the reader sees is what runs here.
Each snippet runs as a whole program with /usr/bin/python3: a prelude gives
it the names the document leaves to the user (loader, train_step,
save_checkpoint) as stubs that leave a trace, and the checks below look at
that trace, in the environments a script meets: under `srun --ddp` with and
without --ddp-hang-timeout or --ddp-requeue, and under torchrun (none of
slurm-ddp's variables). A snippet named below that no document marks is a
failure too, so a marker cannot go missing unnoticed.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile

PYTHON = "/usr/bin/python3"  # Debian's, with torch; a pyenv python3 first on PATH has none
MARKER = re.compile(r"^<!-- snippet: ([\w-]+) -->\s*$")

# The names a document leaves to the user, as stubs: three steps of training,
# and a checkpoint that leaves a file behind (SNIPPET_TRACE).
PRELUDE = '''\
import os as _os, time as _time
loader = [b"batch"] * int(_os.environ.get("SNIPPET_STEPS", "3"))
def train_step(batch):
    _time.sleep(float(_os.environ.get("SNIPPET_STEP_SECONDS", "0")))
def save_checkpoint():
    open(_os.environ["SNIPPET_TRACE"], "a").write("saved\\n")
'''

# After the SIGUSR1 snippet: training goes on until the handler has run (the
# test sends the signal once it reads "ready") or SNIPPET_WAIT seconds have
# passed, then says which.
USR1_EPILOGUE = '''
print("ready", flush=True)
_deadline = _time.time() + float(_os.environ.get("SNIPPET_WAIT", "20"))
while not _os.path.exists(_os.environ["SNIPPET_TRACE"]) and _time.time() < _deadline:
    _time.sleep(0.05)
print("went on after USR1" if _os.path.exists(_os.environ["SNIPPET_TRACE"]) else "no USR1 came", flush=True)
'''

# After the progress snippet, for the run under srun: what the file holds.
PROGRESS_EPILOGUE = '''
if progress:
    print("progress file holds", open(progress).read(), flush=True)
else:
    print("no progress file", flush=True)
'''

EPILOGUES = {"hang-progress": PROGRESS_EPILOGUE, "requeue-usr1": USR1_EPILOGUE}


def snippets(root):
    """{name: (file:line, code)} of every marked snippet under root's Markdown files."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for name in sorted(n for n in names if n.endswith(".md")):
            path = os.path.join(folder, name)
            lines = open(path, encoding="utf-8").read().split("\n")
            for i, line in enumerate(lines):
                m = MARKER.match(line)
                if m:
                    where = "%s:%d" % (os.path.relpath(path, root), i + 1)
                    if m.group(1) in found:
                        sys.exit("doc_snippets: %s marks snippet %s again (first at %s)" % (where, m.group(1),
                                                                                           found[m.group(1)][0]))
                    found[m.group(1)] = (where, block_after(lines, i + 1, where))
    return found


def block_after(lines, i, where):
    """The code block that starts after blank lines at lines[i]: fenced, or indented by four spaces."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].startswith("```"):
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            sys.exit("doc_snippets: %s: the fenced block never closes" % where)
        return "\n".join(lines[i + 1:end]) + "\n"
    block = []
    while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
        block.append(lines[i][4:])
        i += 1
    code = "\n".join(block).strip("\n")
    if not code:
        sys.exit("doc_snippets: %s: no code block after the marker" % where)
    return code + "\n"


def program(name, code):
    return PRELUDE + code + EPILOGUES.get(name, "")


def run(name, code, env_extra, usr1=False):
    """Runs the snippet's program in an environment without slurm-ddp's and torchrun's
    variables, plus env_extra; returns (exit code, stdout + stderr, the trace file's text)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DDP_", "SDDP_", "TORCHELASTIC_", "SLURM_"))}
        env["SNIPPET_TRACE"] = os.path.join(tmp, "trace")
        env.update({k: v.replace("TMP", tmp) for k, v in env_extra.items()})
        proc = subprocess.Popen([PYTHON, "-c", program(name, code)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        out = ""
        if usr1:
            out = proc.stdout.readline()
            if out.strip() == "ready":
                proc.send_signal(signal.SIGUSR1)
        try:
            rest, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
            rest += "\n(killed after 60 s)"
        out += rest
        trace = open(env["SNIPPET_TRACE"]).read() if os.path.exists(env["SNIPPET_TRACE"]) else ""
        progress = env.get("DDP_PROGRESS_FILE")
        written = open(progress).read() if progress and os.path.exists(progress) else None
        return proc.returncode, out, trace, written


def check_progress(code):
    """Without DDP_PROGRESS_FILE (no --ddp-hang-timeout, torchrun) it trains on; with it, the file
    holds the last step."""
    rc, out, _, _ = run("hang-progress", code, {})
    yield rc == 0 and "no progress file" in out, "without DDP_PROGRESS_FILE: exit 0, no file", rc, out
    rc, out, _, written = run("hang-progress", code, {"DDP_PROGRESS_FILE": "TMP/progress"})
    yield rc == 0 and written == "2", "with DDP_PROGRESS_FILE: exit 0, the file holds step 2 (got %r)" % written, \
        rc, out


def check_usr1(code):
    """SIGUSR1 runs the handler: it saves, then exits 0 when the job is requeued (DDP_REQUEUE=1),
    else training goes on."""
    rc, out, trace, _ = run("requeue-usr1", code, {}, usr1=True)
    yield rc == 0 and trace == "saved\n" and "went on after USR1" in out, \
        "SIGUSR1 without DDP_REQUEUE: saved once, training went on, exit 0", rc, out
    rc, out, trace, _ = run("requeue-usr1", code, {"DDP_REQUEUE": "1"}, usr1=True)
    yield rc == 0 and trace == "saved\n" and "went on" not in out, \
        "SIGUSR1 with DDP_REQUEUE=1: saved once, exit 0 at once", rc, out
    rc, out, trace, _ = run("requeue-usr1", code, {"SNIPPET_WAIT": "1"}, usr1=False)
    yield rc == 0 and trace == "" and "no USR1 came" in out, "no SIGUSR1: nothing saved, exit 0", rc, out


CHECKS = {"hang-progress": check_progress, "requeue-usr1": check_usr1}


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--print"):
        sys.exit(__doc__)
    found = snippets(argv[1])
    if len(argv) == 4:
        if argv[3] not in found:
            sys.exit("doc_snippets: no document marks snippet %s" % argv[3])
        sys.stdout.write(program(argv[3], found[argv[3]][1]))
        return 0
    failures = 0
    for name, check in CHECKS.items():
        if name not in found:
            print("FAIL %s: no document marks it (<!-- snippet: %s -->)" % (name, name))
            failures += 1
            continue
        where, code = found[name]
        for ok, what, rc, out in check(code):
            print("%s %s (%s): %s" % ("ok  " if ok else "FAIL", name, where, what))
            if not ok:
                failures += 1
                print("     exit code %s; output:\n%s" % (rc, "".join("     | " + l + "\n" for l in out.splitlines())))
    for name in sorted(set(found) - set(CHECKS)):
        print("FAIL %s (%s): marked, but no check here runs it" % (name, found[name][0]))
        failures += 1
    print("doc_snippets: %d failure(s)" % failures if failures else "doc_snippets: every snippet works")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
