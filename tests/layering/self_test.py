#!/usr/bin/env python3
"""check.py must fail, with file and line, on an upward include, a cycle and a
DEPS line against the order; and pass a tree that keeps the order."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py")


def tree(root, files, cmake):
    for path, text in files.items():
        full = os.path.join(root, "src", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    os.makedirs(os.path.join(root, "cmake"), exist_ok=True)
    with open(os.path.join(root, "cmake", "folders.cmake"), "w") as f:
        f.write(cmake)


def run(files, cmake):
    with tempfile.TemporaryDirectory() as root:
        tree(root, files, cmake)
        p = subprocess.run([sys.executable, CHECK, os.path.join(root, "src")],
                           capture_output=True, text=True)
        return p.returncode, p.stdout


GOOD = {"util/a.h": "#pragma once\n", "checks/c.cc": '#include "util/a.h"\n'}
GOOD_CMAKE = "gd_folder(util)\ngd_folder(checks DEPS util)\n"
failures = []


def expect(name, rc_want, must, files, cmake=GOOD_CMAKE):
    rc, out = run(files, cmake)
    if rc != rc_want or must not in out:
        failures.append(f"{name}: rc {rc}, output:\n{out}")


expect("order kept", 0, "0 problems", GOOD)
expect("upward include", 1, "src/util/b.cc:2: util includes checks/c.h",
       {**GOOD, "util/b.cc": '// why\n#include "checks/c.h"\n'})
expect("cycle", 1, "cycle: checks <-> util",
       {**GOOD, "util/b.cc": '#include "checks/c.h"\n'})
expect("sideways", 1, "explain includes topo/t.h",
       {**GOOD, "topo/t.h": "", "explain/e.cc": '#include "topo/t.h"\n'},
       GOOD_CMAKE + "gd_folder(topo)\ngd_folder(explain)\n")
expect("DEPS upward", 1, "gd_util links gd_checks",
       GOOD, "gd_folder(util DEPS checks)\ngd_folder(checks DEPS util)\n")
expect("include not linked", 1, "checks includes util, which gd_checks does not link",
       GOOD, "gd_folder(util)\ngd_folder(checks)\n")
expect("unknown folder", 1, "nowhere: a folder that has no layer", {**GOOD, "nowhere/x.cc": ""})
for f in failures:
    print(f)
print(f"layering self-test: {7 - len(failures)} of 7 cases as expected")
sys.exit(1 if failures else 0)
