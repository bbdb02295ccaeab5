#!/usr/bin/python3
"""Every training table in bench/results is what its JSON renders to
(bench/train_bench.py --render): a figure edited by hand, or a table left
behind by an older harness, fails here. And every bench program compiles.

usage: tests/lint/bench_results.py SOURCE_DIR"""
import glob, json, os, sys


def main():
    root = sys.argv[1]
    sys.path.insert(0, os.path.join(root, "bench"))
    import train_bench  # noqa: E402 (the harness, found beside the results)

    failures = []
    for path in sorted(glob.glob(os.path.join(root, "bench", "*.py"))):
        try:
            compile(open(path).read(), path, "exec")
        except SyntaxError as e:
            failures.append(f"{path}: does not compile: {e}")
    tables = sorted(glob.glob(os.path.join(root, "bench", "results", "train*.json")))
    if not tables:
        failures.append("bench/results has no train*.json: run bench/train_bench.py")
    for path in tables:
        md = path.removesuffix(".json") + ".md"
        with open(path) as f:
            want = train_bench.render(json.load(f))
        have = open(md).read() if os.path.exists(md) else ""
        if have != want:
            failures.append(f"{md} is not what {os.path.basename(path)} renders to: run "
                            f"`bench/train_bench.py --render {os.path.relpath(path, root)}` (and never edit a figure by hand)")
    for f in failures:
        print("bench_results:", f, file=sys.stderr)
    print(f"bench_results: {len(tables)} training table(s) checked, {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
