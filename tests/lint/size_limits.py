#!/usr/bin/python3
"""Fails when a source file or a function of the product code is too long.

Usage: size_limits.py SOURCE_DIR

Limits, for the C, C++ and CUDA files of agent/, spank/, common/ and trainer/:
a file at most 500 lines, a function (lambdas included) at most 60 lines,
from the line of its name to the line of its closing brace. The limits are a
guide: they keep a function readable as a whole and a file about one thing,
so what goes over is split by meaning into named steps. A file that reads
better whole (one class, one state machine) goes over only by name, in
FILE_EXEMPTIONS, with its own limit and the reason; an exemption that is no
longer needed is an error too, so the list stays true. Functions are measured
with Universal Ctags (packaging/install-deps.sh test installs it), which gives each
function's first and last line.

Standard library only: it runs on Debian's python3 with nothing installed.
"""

import os
import shutil
import subprocess
import sys

DIRS = ("agent", "spank", "common", "trainer")
SOURCE_SUFFIXES = (".c", ".cpp", ".hpp", ".h", ".cu", ".cuh")
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60
# path: (its own limit, why it stays one file)
FILE_EXEMPTIONS = {
    "agent/node/agent.cpp": (
        750, "the node agent is one class: its loop, the lifecycle's events, its workers and the duties beside "
             "them; split across files, following one event means leaving the class's file"),
    "agent/job/job.cpp": (
        650, "node 0's decisions are one state machine: the failure classes' policy, the restart rule and every "
             "event's handler read together"),
}


def is_skipped_dir(name):
    # Build trees (build/, build-*/) and hidden folders hold no sources of ours.
    return name.startswith(".") or name == "build" or name.startswith("build-")


def source_files(root):
    files = []
    for top in DIRS:
        for folder, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not is_skipped_dir(d))
            files += sorted(os.path.relpath(os.path.join(folder, n), root)
                            for n in names if n.endswith(SOURCE_SUFFIXES))
    return files


def line_count(path):
    with open(path, "rb") as f:
        data = f.read()
    # A last line without its newline is a line too.
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def functions(root, files):
    """[(path, first line, last line, name)] of every function definition, from ctags."""
    ctags = shutil.which("ctags")
    if ctags is None:
        raise RuntimeError("ctags not found; packaging/install-deps.sh test installs universal-ctags")
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version:
        raise RuntimeError("%s is not Universal Ctags (it says: %s); packaging/install-deps.sh test installs "
                           "universal-ctags" % (ctags, version.strip().splitlines()[0] if version else "nothing"))
    # Every file through the C++ parser (CUDA is C++ to it); kind f: function
    # definitions, not declarations; field e: the line of the closing brace.
    # The file name goes last so that spaces in it do not split the fields.
    cmd = [ctags, "--languages=C++", "--map-C++=+.c", "--map-C++=+.cu", "--map-C++=+.cuh", "--kinds-C++=f",
           "--fields=+ne", "-x", "--_xformat=%{line} %{end} %N %F"] + files
    run = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("ctags failed (exit %d): %s" % (run.returncode, run.stderr.strip()))
    found = []
    for row in run.stdout.splitlines():
        first, last, name, path = row.split(" ", 3)
        if not (first.isdigit() and last.isdigit()):
            raise RuntimeError("ctags gave no line range for %s in %s (%r); cannot measure it" % (name, path, row))
        found.append((path, int(first), int(last), name))
    return found


def display_name(name):
    # ctags names a lambda __anon<hash>: say what it is instead.
    return "a lambda" if name.startswith("__anon") else "function " + name


def check(root, out=sys.stdout):
    files = source_files(root)
    if not files:
        print("size_limits: no source files under %s in %s" % (", ".join(DIRS), root), file=out)
        return 1
    violations = []
    for path in files:
        n = line_count(os.path.join(root, path))
        limit, why = FILE_EXEMPTIONS.get(path, (MAX_FILE_LINES, ""))
        if n > limit:
            violations.append((path, 0, "%s: %d lines (limit %d%s)"
                               % (path, n, limit, ", exempt because " + why if why else "")))
        elif why and n <= MAX_FILE_LINES:
            violations.append((path, 0, "%s: %d lines: within %d, so its exemption in size_limits.py is no "
                               "longer needed; remove it" % (path, n, MAX_FILE_LINES)))
    for path in sorted(set(FILE_EXEMPTIONS) - set(files)):
        violations.append((path, 0, "%s: exempt in size_limits.py but not found; remove its exemption" % path))
    try:
        measured = functions(root, files)
    except RuntimeError as e:
        print("size_limits: " + str(e), file=out)
        return 1
    for path, first, last, name in measured:
        n = last - first + 1
        if n > MAX_FUNCTION_LINES:
            violations.append((path, first, "%s:%d: %s is %d lines (limit %d)"
                               % (path, first, display_name(name), n, MAX_FUNCTION_LINES)))
    for _, _, message in sorted(violations):
        print(message, file=out)
    if violations:
        print("size_limits: %d over the limits; split them by meaning into named steps" % len(violations),
              file=out)
        return 1
    print("size_limits: %d files, %d functions, all within %d lines a file and %d a function"
          % (len(files), len(measured), MAX_FILE_LINES, MAX_FUNCTION_LINES), file=out)
    return 0


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    return check(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
