#!/usr/bin/env python3
"""promtool over everything Prometheus reads from gpudoctor:

- `promtool check metrics` on every golden scrape in tests/prometheus/golden/
  (*.prom, written by tests/unit/prometheus_test.cc through render_metrics):
  exit 0 and no lint message;
- `promtool check rules` and `promtool test rules` on deploy/prometheus/;
- `promtool check config` on deploy/prometheus/prometheus.example.yml.

usage: promtool_check.py [--update GPUDOCTOR_TESTS]

--update first rewrites the goldens (runs the PrometheusGolden unit tests of
the given gpudoctor_tests binary with GD_UPDATE_GOLDEN=1); review the diff.
Exits 77 (ctest's skip) when promtool is not installed.
"""
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DEPLOY = os.path.join(SRC, "deploy", "prometheus")


def run(argv, stdin=None, cwd=None):
    if stdin is None:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              cwd=cwd, timeout=60)
    with open(stdin, "rb") as f:
        return subprocess.run(argv, stdin=f, capture_output=True, text=True, cwd=cwd, timeout=60)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--update"]:
        if len(args) != 2:
            sys.exit(__doc__)
        env = dict(os.environ, GD_UPDATE_GOLDEN="1")
        r = subprocess.run([args[1], "--gtest_filter=PrometheusGolden.*"], env=env)
        if r.returncode != 0:
            sys.exit("updating the goldens failed")
    elif args:
        sys.exit(__doc__)
    promtool = shutil.which("promtool")
    if promtool is None:
        print("SKIP: promtool is not installed (apt-get install prometheus)")
        sys.exit(77)
    failures = []
    goldens = sorted(glob.glob(os.path.join(HERE, "golden", "*.prom")))
    if len(goldens) < 2:
        failures.append(f"expected golden scrapes in {HERE}/golden, found {len(goldens)}")
    for path in goldens:
        r = run([promtool, "check", "metrics"], stdin=path)
        # Lint problems exit 3 and go to stderr; a parse error exits 1.
        if r.returncode != 0 or r.stderr.strip() or r.stdout.strip():
            failures.append(f"promtool check metrics {os.path.relpath(path, SRC)}: exit "
                            f"{r.returncode}\n{r.stdout}{r.stderr}")
        else:
            print(f"ok: promtool check metrics < {os.path.relpath(path, SRC)}")
    for argv in (["check", "rules", "gpudoctor-rules.yml"],
                 ["test", "rules", "gpudoctor-rules.test.yml"],
                 ["check", "config", "prometheus.example.yml"]):
        r = run([promtool] + argv, cwd=DEPLOY)
        if r.returncode != 0:
            failures.append(f"promtool {' '.join(argv)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        else:
            print(f"ok: promtool {' '.join(argv)}")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
