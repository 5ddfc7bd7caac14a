#!/usr/bin/env python3
"""Golden tests of `gpudoctor diff` over the fleet in tests/diff/nodes/
(written by make_nodes.py): the text and JSON outputs are compared with
tests/diff/golden/<case>.{txt,json}, error messages with <case>.err, and
every case's exit code with the one below. `--update` rewrites the goldens
(review the diff before committing).

usage: run.py GPUDOCTOR [--update] [--only CASE]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import golden  # noqa: E402  (tests/golden.py)
GOLDEN = os.path.join(HERE, "golden")


def node(n):
    return f"nodes/gpu-node-{n:02d}.json"


ALL = [node(n) for n in range(1, 7)]

# (case, arguments, expected exit, outputs compared)
CASES = [
    # Six nodes, four of them drifted one way each: exit 1, each odd one named.
    ("fleet", ALL, 1, ("txt", "json")),
    ("fleet-verbose", ["-v"] + ALL, 1, ("txt",)),
    # Two identical nodes: exit 0, nothing to say.
    ("identical", [node(1), node(6)], 0, ("txt", "json")),
    # Two nodes that differ: no majority, neither is "the odd one".
    ("pair", [node(1), node(2)], 1, ("txt",)),
    # The node whose report fails while the others pass.
    ("fm-stopped", [node(1), node(4), node(6)], 1, ("txt",)),
    # The same file twice: both named, told apart, identical.
    ("same-file-twice", [node(1), node(1)], 0, ("txt",)),
    # Usage and unreadable input.
    ("one-file", [node(1)], 64, ("err",)),
    ("no-file", [], 64, ("err",)),
    ("missing-file", [node(1), "nodes/no-such-node.json"], 3, ("err",)),
    ("not-json", [node(1), "bad/not-json.json"], 3, ("err",)),
    # Reports (check --json, /report.json) recorded from three of the nodes.
    ("reports", ["reports/gpu-node-01.json", "reports/gpu-node-03.json",
                 "reports/gpu-node-04.json"], 1, ("txt",)),
    # A report beside a snapshot: reports compare with reports only.
    ("not-a-snapshot", [node(1), "bad/report.json"], 64, ("err",)),
]


def run(gd, args):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([gd, "diff"] + args, cwd=HERE, env=env, capture_output=True, text=True,
                          timeout=60)


def check_json(name, text, failures):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        failures.append(f"{name}: --json is not JSON: {e}")
        return
    if doc.get("schema") != "gpudoctor.diff/v1":
        failures.append(f"{name}: schema {doc.get('schema')!r}")
    for f in doc.get("fields", []):
        nodes = [n for g in f["groups"] for n in g["nodes"]]
        if len(nodes) != len(set(nodes)):
            failures.append(f"{name}: {f['label']}: a node in two groups")


def main():
    args = sys.argv[1:]
    update = "--update" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    positional = [a for a in args if not a.startswith("--") and a != only]
    gd = os.path.abspath(positional[0])
    failures = []
    ran = 0
    for name, case_args, want_exit, outputs in CASES:
        if only and name != only:
            continue
        ran += 1
        before = len(failures)
        text = run(gd, case_args)
        if text.returncode != want_exit:
            failures.append(f"{name}: exit {text.returncode}, expected {want_exit}\n"
                            f"{text.stdout}{text.stderr}")
        if "err" in outputs:
            if text.stdout or text.stderr.count("\n") != 1:
                failures.append(f"{name}: expected one line on stderr and no output, got\n"
                                f"{text.stdout}{text.stderr}")
            golden.compare(GOLDEN, name, "err", text.stderr, update, failures)
        if "txt" in outputs:
            if text.stderr:
                failures.append(f"{name}: unexpected stderr: {text.stderr}")
            golden.compare(GOLDEN, name, "txt", text.stdout, update, failures)
        if "json" in outputs:
            js = run(gd, ["--json"] + case_args)
            if js.returncode != want_exit:
                failures.append(f"{name}: --json exit {js.returncode}, expected {want_exit}")
            check_json(name, js.stdout, failures)
            golden.compare(GOLDEN, name, "json", js.stdout, update, failures)
        print(("ok   " if len(failures) == before else "FAIL ") + name)
    for f in failures:
        print(f, file=sys.stderr)
    print(f"diff: {ran} cases, {len(failures)} failures")
    sys.exit(1 if failures or ran == 0 else 0)


if __name__ == "__main__":
    main()
