#!/usr/bin/env python3
"""Writes docs/checks.md from the check registry (`gpudoctor check --list-checks --json`)
and the active tests (`gpudoctor diag --list-tests --json`, src/diag/tests.cc).

usage: gen-docs.py GPUDOCTOR [--check]   (--check: fail if docs/checks.md is out of date)
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "docs", "checks.md")


def ids_cell(row):
    return ", ".join(f"`{i}`" for i in row["ids"])


def render(checks, tests):
    out = ["# Checks", "",
           "Generated from `src/checks/registry.cc` and `src/diag/tests.cc` by",
           "`scripts/gen-docs.py`; do not edit by hand.",
           "Run one check or area with `gpudoctor check --only NAME|ID|AREA`, skip with `--skip`.",
           "", "| check | verifies | finding ids |", "|---|---|---|"]
    out += [f"| `{c['name']}` | {c['description']} | {ids_cell(c)} |" for c in checks]
    out += ["", "## Active tests: `gpudoctor diag`", "",
            "Run on demand with `gpudoctor diag --level 1|2|3` ([diag.md](diag.md)); a level runs",
            "its own tests and those of the levels below it.",
            "", "| test | level | verifies | finding ids |", "|---|---|---|---|"]
    out += [f"| `{t['name']}` | {t['level']} | {t['description']} | {ids_cell(t)} |"
            for t in tests]
    return "\n".join(out) + "\n"


def main():
    gd = sys.argv[1]
    def listing(key, *args):
        return json.loads(subprocess.run([gd, *args, "--json"], capture_output=True, text=True,
                                         check=True).stdout)[key]
    text = render(listing("checks", "check", "--list-checks"),
                  listing("tests", "diag", "--list-tests"))
    if "--check" in sys.argv:
        with open(TARGET) as f:
            if f.read() != text:
                sys.exit("docs/checks.md is out of date: run scripts/gen-docs.py build/gpudoctor")
        print("docs/checks.md is up to date")
        return
    with open(TARGET, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
