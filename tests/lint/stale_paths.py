#!/usr/bin/python3
"""Fails when a comment or a document names a file of this repository that does not exist.

Usage: stale_paths.py SOURCE_DIR
       stale_paths.py --self-test

Comments point the reader at the file that does a thing ("the restart rule:
agent/job/job.cpp"); a file that moved leaves such pointers behind, and a
reader who follows one finds nothing. This lint reads the comments of the
C, C++, CUDA, shell, Python and CMake files, and the whole text of the
documents (Markdown, man pages, the examples' and conf's text), and checks
every name of one of our files in them:

- a path with a folder ("agent/job/job.cpp", "wire/failure.hpp",
  "doc/failures.md") must be the end of a path in the repository, folder by
  folder;
- a bare file name with one of our source suffixes ("job.hpp") must be the
  name of a file in the repository.

Names that are not ours are left alone: absolute paths (/etc/slurm/ddp.conf),
URLs, names under a folder we do not have (torch/distributed/run.py), and
the few bare names of other projects' files in EXTERNAL. Standard library
only.
"""

import os
import re
import sys

SKIP_DIRS = {".git", "build", "fuzz/corpus", "fuzz/regressions"}
CODE_SUFFIXES = (".c", ".cpp", ".hpp", ".h", ".cu", ".cuh")
SCRIPT_SUFFIXES = (".sh", ".py", ".lua")
DOC_SUFFIXES = (".md", ".1", ".5", ".8", ".example", ".sbatch")
# Suffixes of the files our text names.
NAMED_SUFFIXES = ("cpp", "hpp", "h", "c", "cu", "cuh", "sh", "py", "md", "txt", "cmake", "lua", "spec", "sbatch",
                  "example", "conf", "xml", "json", "in", "map")
# Bare names of other projects' files, as our comments cite them.
EXTERNAL = {"slurm/slurm.h", "slurm/spank.h", "examples/mnist/main.py", "version.hpp", "check.h", "unistd.h",
            "string.h", "stdio.h", "fcntl.h", "slurm_version.h", "slurmdb.h", "slurm_errno.h", "spank.c",
            "srun_job.c", "job_scheduler.c", "job_mgr.c", "task.c", "srun.c", "pyxis_srun.c",
            "pyxis_slurmstepd.c", "proc_req.c", "mgr.c", "fetch_config.c", "slurm_version.h.in","run.py", "train_gpt2.cu", "train_gpt2.c", "train.py", "llm.c", "slurm.conf", "gres.conf",
            "plugstack.conf", "cgroup.conf", "spank.h", "nccl.h", "cudnn.h", "gloo.h", "ddp.conf", "job.sh",
            "cli_filter.lua", "topology.conf", "acct_gather.conf", "conftest.py", "setup.py", "model.py",
            "distributed.py", "elastic_agent.py", "api.py", "timer.py", "error_handler.py", "slurm.h",
            "task_prolog.sh", "health_check.sh", "fail.py", "raise.py", "hang.py",
            "profiler.h", "nccl_profiler.h", "CMakeLists.txt",
            "Makefile", "README.md", "RESULTS.md", "metrics.csv", "metrics.png", "stats.json", "rank-R.out"}
# A word that may be a file's name: folders, then a name with dots in it;
# names() keeps those whose last suffix (or the one before a man page's
# section or an ".in") is one of NAMED_SUFFIXES.
WORD = re.compile(r"(?<![\w./~$@%-])(?:\.\.?/)*([A-Za-z_][\w+-]*(?:[./][\w+-]+)+)")
SUFFIX = re.compile(r"\.(?:%s)(?:\.(?:in|[158]|example))?$" % "|".join(NAMED_SUFFIXES))


def names_in(line):
    for m in WORD.finditer(line):
        word = m.group(1)
        if SUFFIX.search(word) and "//" not in word:
            yield m.start(1), word


def is_skipped(rel):
    parts = rel.split(os.sep)
    return any(p.startswith(".") or p == "build" or p.startswith("build-") for p in parts) or \
        any(skip in rel for skip in ("fuzz/corpus", "fuzz/regressions"))


def repository_files(root):
    files = []
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        dirs[:] = sorted(d for d in dirs if not is_skipped(os.path.normpath(os.path.join(rel_folder, d))))
        files += [os.path.normpath(os.path.join(rel_folder, n)) for n in sorted(names)]
    return files


def comments(path, text):
    """The comment text of a source file, with line numbers kept (other text blanked)."""
    if path.endswith(CODE_SUFFIXES):
        out = []
        for m in re.finditer(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|[^/\"']+|.", text, re.S):
            s = m.group(0)
            out.append(s if s.startswith("//") or s.startswith("/*") else re.sub(r"[^\n]", " ", s))
        return "".join(out)
    if path.endswith(SCRIPT_SUFFIXES) or os.path.basename(path) in ("CMakeLists.txt",) or path.endswith(".cmake"):
        marker = "--" if path.endswith(".lua") else "#"
        lines = []
        for line in text.split("\n"):
            i = line.find(marker)
            # A '#' inside a quoted string or a ${#var} is not a comment: only one
            # at the line's start or after a blank counts.
            while i > 0 and not line[i - 1].isspace():
                i = line.find(marker, i + 1)
            lines.append(line[i:] if i >= 0 else "")
        return "\n".join(lines)
    return text


def problems(root):
    files = repository_files(root)
    names = {os.path.basename(f) for f in files}
    suffix_paths = set()
    for f in files:
        parts = f.split(os.sep)
        for i in range(len(parts)):
            suffix_paths.add("/".join(parts[i:]))
    top_level = {f.split(os.sep)[0] for f in files if os.sep in f}
    folders = set()
    for f in files:
        parts = f.split(os.sep)[:-1]
        folders.update(parts)
    found = []
    for rel in files:
        if not rel.endswith(CODE_SUFFIXES + SCRIPT_SUFFIXES + DOC_SUFFIXES) and \
                os.path.basename(rel) != "CMakeLists.txt" and not rel.endswith(".cmake"):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        scanned = comments(rel, text)
        for lineno, line in enumerate(scanned.split("\n"), 1):
            for start, name in names_in(line):
                if "://" in line[max(0, start - 8):start] or name in EXTERNAL:
                    continue
                if "/" in name:
                    first = name.split("/")[0]
                    if first not in top_level and first not in folders:
                        continue  # another project's folder (torch/, nccl/...)
                    if name not in suffix_paths:
                        found.append("%s:%d: names %s, which is not in the repository" % (rel, lineno, name))
                elif name not in names and name not in EXTERNAL and "_" in name or \
                        (name.endswith(CODE_SUFFIXES) and name not in names and name not in EXTERNAL):
                    found.append("%s:%d: names %s, which is not in the repository" % (rel, lineno, name))
    return found


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "agent", "job"))
        os.makedirs(os.path.join(root, "doc"))
        open(os.path.join(root, "agent", "job", "job.cpp"), "w").write(
            '// the rule: agent/job/job.cpp, job.cpp\n'
            '// gone: agent/rendezvous/coordinator.cpp, coordinator_config.cpp\n'
            'const char* s = "not/a/comment.cpp";  // torch/distributed/run.py /etc/slurm/x.conf\n')
        open(os.path.join(root, "doc", "a.md"), "w").write(
            "See [x](../agent/job/job.cpp), job/job.cpp and doc/missing.md; https://example.org/x/y.py\n")
        got = problems(root)
        want = ["agent/job/job.cpp:2: names agent/rendezvous/coordinator.cpp, which is not in the repository",
                "agent/job/job.cpp:2: names coordinator_config.cpp, which is not in the repository",
                "doc/a.md:1: names doc/missing.md, which is not in the repository"]
        if got != want:
            print("stale_paths self-test: got %r, want %r" % (got, want))
            return 1
    print("stale_paths self-test: passed")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    found = problems(argv[1])
    for line in found:
        print(line)
    if found:
        print("stale_paths: %d name(s) of files that are not in the repository: point them at the file that does "
              "it now, or say it without a path" % len(found))
        return 1
    print("stale_paths: every file named in comments and documents exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
