#!/usr/bin/python3
"""Fails when the includes between the project's parts form a cycle.

Usage: include_cycles.py SOURCE_DIR     check the tree, print its layering
       include_cycles.py --self-test    check this script on small made-up trees

The parts (the nodes of the graph) are agent, spank, trainer, bench, tests and
each layer of common/ddp (common/ddp/base, wire, site, plan, node). Each
#include "..." of a C, C++ or CUDA file is resolved to the file it names the
way the compiler finds it: first beside the including file, then in the
include directories of the targets built from the including file's folder
(INCLUDE_DIRS below, read off the CMakeLists.txt files). A header is also
compiled as part of other folders' sources, so an include that resolves in
neither place is looked up in every folder's include directories as a last
resort. Includes that name no file of the tree (system, Slurm and generated
headers) are left out. A file in part X that includes a file in part Y is an
edge X -> Y; any cycle among the edges fails the test, printed with one
example include for each of its edges. The layers of common/ddp also have an
order (LAYER_ORDER): a layer includes only the ones before it, so an include
from a layer into a later one fails too, even where it closes no cycle yet.
Without a failure the edges are printed, so the log shows the layering.

Standard library only: it runs on Debian's python3 with nothing installed.
"""

import collections
import os
import re
import sys
import tempfile

SOURCE_SUFFIXES = (".c", ".cpp", ".hpp", ".h", ".cu", ".cuh")
TOP_PARTS = ("agent", "spank", "trainer", "bench", "tests", "common")
LAYERS_DIR = "common/ddp"  # each folder in it is a part of its own
# The layers, each including only the ones before it (common/CMakeLists.txt says why).
LAYER_ORDER = ("base", "wire", "site", "plan", "node")

# The include directories (relative to the source dir, in the compiler's
# search order) of the targets built from each folder; the longest matching
# folder wins. Keep in step with the target_include_directories and
# target_link_libraries calls of the CMakeLists.txt files: an include that only
# a folder missing here could resolve fails the test (see scan()), so a stale
# table shows instead of silently losing edges.
INCLUDE_DIRS = {
    # ddp_common: common/ (PUBLIC), and the generated version.hpp outside the tree.
    "common": ["common"],
    # spank_ddp: Slurm's headers and ddp_common's; its own headers by bare
    # name, found beside the including file.
    "spank": ["common"],
    # ddp_agent_core: agent/ (PUBLIC), then ddp_common's.
    "agent": ["agent", "common"],
    # ddp_trainer_core: trainer/ (PUBLIC), then ddp_common's; ddp_trainer_cuda
    # (trainer/cuda) adds trainer/ PRIVATE.
    "trainer": ["trainer", "common"],
    # The benchmarks link ddp_trainer_core.
    "bench": ["trainer", "common"],
    # unit_tests: Slurm's headers and spank/ (PRIVATE), then ddp_common,
    # ddp_agent_core and ddp_trainer_core.
    "tests/unit": ["spank", "common", "agent", "trainer"],
    # The fuzz targets: their own folder, spank/ (fuzz_hostlist), and the
    # libraries they link.
    "tests/fuzz": ["tests/fuzz", "spank", "common", "agent", "trainer"],
    # The GPU self-tests link ddp_trainer_cuda.
    "tests/gpu": ["trainer", "common"],
    # The rest of tests/ (test plugins, Slurm header fixtures): Slurm's headers only.
    "tests": [],
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

Include = collections.namedtuple("Include", "source line text target how")


def is_skipped_dir(name):
    # Build trees (build/, build-*/) and hidden folders hold no sources of ours.
    return name.startswith(".") or name == "build" or name.startswith("build-")


def source_files(root):
    """Every C, C++ and CUDA file of the parts, as paths relative to root."""
    files = []
    for top in TOP_PARTS:
        for folder, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not is_skipped_dir(d))
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    files.append(os.path.relpath(os.path.join(folder, name), root))
    return files


def part_of(path):
    """The graph node of a file: its top folder, or its layer of common/ddp."""
    parts = path.split(os.sep)
    layer_parts = LAYERS_DIR.split("/")
    if parts[: len(layer_parts)] == layer_parts and len(parts) > len(layer_parts) + 1:
        return "/".join(parts[: len(layer_parts) + 1])
    return parts[0]


def include_dirs_of(path, table):
    """The include directories of the targets built from the file's folder."""
    best = None
    for folder in table:
        if path.startswith(folder + os.sep) and (best is None or len(folder) > len(best)):
            best = folder
    return table[best] if best is not None else []


def all_include_dirs(table):
    seen = []
    for dirs in table.values():
        for d in dirs:
            if d not in seen:
                seen.append(d)
    return seen


def existing(rel_dir, name, known):
    """The path of rel_dir/name if it is a source file of the tree, else None."""
    candidate = os.path.normpath(os.path.join(rel_dir, name))
    if candidate.startswith(".." + os.sep) or os.path.isabs(candidate):
        return None
    return candidate if candidate in known else None


def resolve(source, name, table, known):
    """(file, how) for a quoted include, or (None, None) when it names no file of the tree."""
    found = existing(os.path.dirname(source), name, known)
    if found:
        return found, "relative to it"
    for d in include_dirs_of(source, table):
        found = existing(d, name, known)
        if found:
            return found, "in " + d + "/"
    for d in all_include_dirs(table):
        found = existing(d, name, known)
        if found:
            return found, "in " + d + "/, on the include path of other parts that include it, not its own"
    return None, None


def scan(root, table=INCLUDE_DIRS):
    """All includes of the tree that resolve to a file of it, and the problems found on the way."""
    files = source_files(root)
    known = set(files)
    includes, problems = [], []
    for d in all_include_dirs(table):
        if not os.path.isdir(os.path.join(root, d)):
            problems.append("include directory %s/ (INCLUDE_DIRS) does not exist; update this script" % d)
    for source in files:
        with open(os.path.join(root, source), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                name = m.group(1)
                target, how = resolve(source, name, table, known)
                if target:
                    includes.append(Include(source, number, name, target, how))
                    continue
                # Named no file through any folder this script knows. If a file
                # of the tree does end with that path, the compiler reaches it
                # through an include directory missing from INCLUDE_DIRS, and
                # the graph would silently lose an edge.
                tails = sorted(k for k in known if k.endswith(os.sep + os.path.normpath(name)))
                if tails:
                    problems.append(
                        '%s:%d includes "%s", which resolves to no file through the include directories '
                        "this script knows, yet %s ends with that path: add the include directory that "
                        "reaches it to INCLUDE_DIRS" % (source, number, name, ", ".join(tails)))
    return includes, problems


def build_graph(includes):
    """{(X, Y): [Include, ...]} for X != Y."""
    edges = collections.OrderedDict()
    for inc in includes:
        x, y = part_of(inc.source), part_of(inc.target)
        if x != y:
            edges.setdefault((x, y), []).append(inc)
    return edges


def strongly_connected(nodes, succ):
    """Tarjan's algorithm, iterative; the components with more than one node."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(succ.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def shortest_cycle(comp, succ):
    """A shortest cycle inside one strongly connected component: [a, b, ..., a]."""
    members = set(comp)
    best = None
    for start in comp:
        # Breadth-first from start back to start, staying in the component.
        parent = {start: None}
        queue = collections.deque([start])
        found = None
        while queue and found is None:
            v = queue.popleft()
            for w in sorted(succ.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    found = v
                    break
                if w not in parent:
                    parent[w] = v
                    queue.append(w)
        if found is None:
            continue
        path = [found]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        cycle = list(reversed(path)) + [start]
        if best is None or len(cycle) < len(best):
            best = cycle
    return best


def find_cycles(edges):
    """[(parts, cycle)]: each tangle of parts that reach each other (a strongly
    connected component), with one of its shortest cycles."""
    succ = collections.defaultdict(set)
    nodes = set()
    for x, y in edges:
        succ[x].add(y)
        nodes.update((x, y))
    return [(comp, shortest_cycle(comp, succ)) for comp in strongly_connected(nodes, succ)]


def layer_violations(edges):
    """Includes from a layer of common/ddp into a later one, and layers LAYER_ORDER does not name."""
    found, problems = [], []
    for (x, y), incs in sorted(edges.items()):
        layers = [p[len(LAYERS_DIR) + 1:] for p in (x, y) if p.startswith(LAYERS_DIR + "/")]
        if len(layers) != 2:
            continue
        unknown = [name for name in layers if name not in LAYER_ORDER]
        if unknown:
            problems.append("%s/%s is not in LAYER_ORDER: give it its place among %s"
                            % (LAYERS_DIR, unknown[0], ", ".join(LAYER_ORDER)))
        elif LAYER_ORDER.index(layers[1]) > LAYER_ORDER.index(layers[0]):
            found.append((x, y, incs))
    return found, sorted(set(problems))


def example(inc):
    return '%s:%d includes "%s" (%s, found %s)' % (inc.source, inc.line, inc.text, inc.target, inc.how)


def check(root, out=sys.stdout):
    """0 when the parts' includes form no cycle, 1 otherwise; reports on out."""
    includes, problems = scan(root)
    edges = build_graph(includes)
    cycles = find_cycles(edges)
    upward, unordered = layer_violations(edges)
    for p in problems + unordered:
        print("include_cycles: " + p, file=out)
    for x, y, incs in upward:
        print("include_cycles: %s includes the later layer %s (%d include%s), e.g. %s; the layers go %s, each "
              "including only the ones before it" % (x, y, len(incs), "" if len(incs) == 1 else "s",
                                                      example(incs[0]), " < ".join(LAYER_ORDER)), file=out)
    if cycles:
        for comp, cycle in cycles:
            print("include_cycles: include cycle between the parts: " + " -> ".join(cycle), file=out)
            for x, y in zip(cycle, cycle[1:]):
                incs = edges[(x, y)]
                print("  %s -> %s (%d include%s), e.g. %s"
                      % (x, y, len(incs), "" if len(incs) == 1 else "s", example(incs[0])), file=out)
            if len(comp) > len(cycle) - 1:
                # Breaking the shortest cycle may leave a longer one among these.
                print("  (these parts all reach each other through includes: %s)" % ", ".join(comp), file=out)
        print("include_cycles: parts must include each other one way only; move the code, or the include, "
              "that closes each cycle", file=out)
    if cycles or problems or upward or unordered:
        return 1
    print("include_cycles: no cycle, layers in order; %d includes between parts, %d edges:"
          % (sum(len(v) for v in edges.values()), len(edges)), file=out)
    for (x, y), incs in sorted(edges.items()):
        print("  %-18s -> %-18s %4d" % (x, y, len(incs)), file=out)
    return 0


# ---------------------------------------------------------------------------
# --self-test: the resolution and the cycle finding on made-up trees.

def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def every_include_dir():
    return {d: "" for d in all_include_dirs(INCLUDE_DIRS)}


def self_test():
    failures = []

    def expect(what, condition):
        if not condition:
            failures.append(what)

    def run(files):
        with tempfile.TemporaryDirectory() as root:
            for d in every_include_dir():
                os.makedirs(os.path.join(root, d), exist_ok=True)
            write_tree(root, files)
            includes, problems = scan(root)
            edges = build_graph(includes)
            return includes, problems, edges, find_cycles(edges)

    layered = {
        "common/ddp/base/result.hpp": "#pragma once\n#include <string>\n",
        "common/ddp/base/parse.hpp": '#include "ddp/base/result.hpp"\n#include "ddp/base/version.hpp"\n',
        "common/ddp/wire/plan.hpp": '#include "ddp/base/parse.hpp"\n',
        "common/ddp/plan/step.hpp": '#include "ddp/wire/plan.hpp"\n#include "slurm/spank.h"\n',
        "agent/agent.hpp": '#include "ddp/plan/step.hpp"\n',
        "agent/agent.cpp": '#include "agent.hpp"\n  #  include "ddp/base/result.hpp"\n',
        "spank/step.hpp": '#include "ddp/base/result.hpp"\n',
        "trainer/train/step.hpp": '#include "model/ops.hpp"\n',
        "trainer/model/ops.hpp": "// #include \"train/step.hpp\" only in a comment line that starts with //\n",
        "tests/unit/test_agent.cpp": '#include "agent.hpp"\n#include "step.hpp"\n',
    }

    includes, problems, edges, cycles = run(layered)
    expect("a layered tree has no cycle, got %s" % cycles, cycles == [])
    expect("a layered tree has no problems, got %s" % problems, problems == [])
    expect("edges of the layered tree, got %s" % sorted(edges),
           sorted(edges) == sorted([
               ("common/ddp/wire", "common/ddp/base"), ("common/ddp/plan", "common/ddp/wire"),
               ("agent", "common/ddp/plan"), ("agent", "common/ddp/base"), ("spank", "common/ddp/base"),
               ("tests", "agent"), ("tests", "spank")]))
    by_source = {(i.source, i.text): i.target for i in includes}
    # A bare name in tests/unit resolves through spank/ (listed before agent/... )
    # only where spank/ has it; "agent.hpp" through agent/.
    expect("tests/unit: step.hpp resolves to spank/step.hpp",
           by_source.get(("tests/unit/test_agent.cpp", "step.hpp")) == "spank/step.hpp")
    expect("an include with spaces around # is read",
           ("agent/agent.cpp", "ddp/base/result.hpp") in by_source)
    expect("generated and Slurm headers are left out",
           not any(i.text in ("ddp/base/version.hpp", "slurm/spank.h") for i in includes))

    # Beside the including file first, then the include directories.
    shadow = dict(layered)
    shadow["agent/ddp/plan/step.hpp"] = "#pragma once\n"
    includes, _, edges, _ = run(shadow)
    by_source = {(i.source, i.text): i.target for i in includes}
    expect("an include resolves beside the including file first",
           by_source.get(("agent/agent.hpp", "ddp/plan/step.hpp")) == "agent/ddp/plan/step.hpp")

    # A two-part cycle: base includes the agent through a relative path.
    planted = dict(layered)
    planted["common/ddp/base/result.hpp"] += '#include "../../../agent/agent.hpp"\n'
    _, _, edges, cycles = run(planted)
    expect("base -> agent -> ... -> base is a cycle, got %s" % cycles,
           len(cycles) == 1 and cycles[0][1][0] == cycles[0][1][-1] and "agent" in cycles[0][1]
           and "common/ddp/base" in cycles[0][1])

    # A bare name that only the agent's include path reaches, from a header of base.
    bare = dict(layered)
    bare["common/ddp/base/result.hpp"] += '#include "agent.hpp"\n'
    includes, _, edges, cycles = run(bare)
    expect("a header's include resolved through another part's include directories",
           ("common/ddp/base", "agent") in edges and len(cycles) == 1)

    # wire -> plan -> wire: the shortest cycle is reported with its edges.
    wire_plan = dict(layered)
    wire_plan["common/ddp/wire/plan.hpp"] += '#include "ddp/plan/step.hpp"\n'
    _, _, edges, cycles = run(wire_plan)
    expect("wire <-> plan is reported as the cycle, got %s" % cycles,
           [c for _, c in cycles] == [["common/ddp/plan", "common/ddp/wire", "common/ddp/plan"]])

    # site -> plan closes no cycle, but plan comes after site: refused all the same.
    upward_site = dict(layered)
    upward_site["common/ddp/site/config.hpp"] = '#include "ddp/plan/step.hpp"\n'
    _, _, edges, cycles = run(upward_site)
    upward, _ = layer_violations(edges)
    expect("site -> plan is an include into a later layer, got %s" % upward,
           not cycles and [(x, y) for x, y, _ in upward] == [("common/ddp/site", "common/ddp/plan")])
    _, unordered = layer_violations({("common/ddp/new", "common/ddp/base"): []})
    expect("a layer missing from LAYER_ORDER is named", unordered and "common/ddp/new" in unordered[0])

    # Three layers in one tangle: its shortest cycle is reported, and all its parts.
    tangle = dict(wire_plan)
    tangle["common/ddp/base/result.hpp"] += '#include "ddp/plan/step.hpp"\n'
    _, _, _, cycles = run(tangle)
    expect("one cycle per tangle, the shortest, got %s" % cycles,
           cycles == [(["common/ddp/base", "common/ddp/plan", "common/ddp/wire"],
                       ["common/ddp/plan", "common/ddp/wire", "common/ddp/plan"])])
    three = dict(wire_plan)
    three["spank/step.hpp"] += '#include "../tests/unit/test_agent.cpp"\n'
    three["tests/unit/test_agent.cpp"] = '#include "step.hpp"\n'
    _, _, _, cycles = run(three)
    expect("two separate cycles are both reported, got %s" % cycles,
           sorted(tuple(c) for _, c in cycles) == [("common/ddp/plan", "common/ddp/wire", "common/ddp/plan"),
                                          ("spank", "tests", "spank")])

    # An include only an unknown include directory could reach is a problem, not a lost edge.
    unknown = dict(layered)
    unknown["spank/step.hpp"] += '#include "ops.hpp"\n'
    _, problems, _, _ = run(unknown)
    expect("an include reachable only through an unknown include directory is reported, got %s" % problems,
           len(problems) == 1 and "trainer/model/ops.hpp" in problems[0] and "spank/step.hpp:2" in problems[0])

    # The report names the cycle and one include per edge.
    with tempfile.TemporaryDirectory() as root:
        for d in every_include_dir():
            os.makedirs(os.path.join(root, d), exist_ok=True)
        write_tree(root, wire_plan)

        class Capture:
            text = ""

            def write(self, s):
                Capture.text += s

        rc = check(root, Capture())
        expect("check() fails on a cycle", rc == 1)
        expect("the report names the cycle and an example include, got:\n" + Capture.text,
               "common/ddp/plan -> common/ddp/wire -> common/ddp/plan" in Capture.text
               and 'common/ddp/wire/plan.hpp:2 includes "ddp/plan/step.hpp"' in Capture.text)

    for f in failures:
        print("include_cycles --self-test: FAILED: " + f)
    if failures:
        return 1
    print("include_cycles --self-test: all checks passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2 or argv[1].startswith("-"):
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    return check(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
