#!/usr/bin/env python3
"""Golden test of `gpudoctor logs --from` over recorded kernel logs.

Each tests/logs/cases/NAME.log (dmesg, dmesg -T, journal, syslog, kmsg
records; several driver generations; noise, truncation, binary garbage) has
NAME.txt and NAME.json beside it: what `logs --from` prints. Refresh them
with --update after a deliberate change and review the diff.

usage: run.py GPUDOCTOR [--update]
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

CASES = pathlib.Path(__file__).resolve().parent / "cases"


def run(gd, args):
    p = subprocess.run([gd, "logs", *args], cwd=CASES, capture_output=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"gpudoctor logs {' '.join(args)} exited {p.returncode}: "
                         f"{p.stderr.decode(errors='replace')}")
    return p.stdout.decode()


def follow(gd):
    """`logs --follow --json` on a growing file prints each new event as one
    JSON line, and stops cleanly on SIGINT."""
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "kern.log"
        log.write_text("[    1.000000] usb 1-1: new high-speed USB device\n")
        p = subprocess.Popen([gd, "logs", "--follow", "--json", "--from", str(log)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.5)
            with log.open("a") as f:
                f.write("[  100.000000] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', "
                        "name=<unknown>, GPU has fallen off the bus.\n")
            deadline = time.time() + 10
            line = ""
            os.set_blocking(p.stdout.fileno(), False)
            while time.time() < deadline and not line.endswith("\n"):
                chunk = p.stdout.readline()
                line += chunk or ""
                if not chunk:
                    time.sleep(0.05)
            p.send_signal(signal.SIGINT)
            rc = p.wait(timeout=5)
        finally:
            if p.poll() is None:
                p.kill()
        if not line:
            return ["follow: no event printed within 10 s of the write"]
        e = json.loads(line)
        failures = []
        if (e.get("kind"), e.get("code"), e.get("gpu")) != ("xid", 79, "0000:41:00.0"):
            failures.append(f"follow: unexpected event {e}")
        if rc != 0:
            failures.append(f"follow: exit {rc} after SIGINT")
        return failures


def main():
    gd = str(pathlib.Path(sys.argv[1]).resolve())
    update = "--update" in sys.argv[2:]
    failed = []
    logs = sorted(CASES.glob("*.log"))
    if not logs:
        raise SystemExit("no cases in " + str(CASES))
    for log in logs:
        outputs = {".txt": run(gd, ["--from", log.name]),
                   ".json": run(gd, ["--from", log.name, "--json"])}
        # The JSON must parse and keep the stable fields.
        for e in json.loads(outputs[".json"])["events"]:
            for key in ("kind", "gpu", "count", "first", "last", "message"):
                if key not in e:
                    failed.append(f"{log.name}: event without '{key}': {e}")
            if e["count"] < 1:
                failed.append(f"{log.name}: count < 1: {e}")
        for ext, got in outputs.items():
            golden = log.with_suffix(ext)
            if update:
                golden.write_text(got)
            elif not golden.exists() or golden.read_text() != got:
                failed.append(f"{log.name}: output differs from {golden.name} "
                              f"(run.py GPUDOCTOR --update, then review the diff)")
    failed += follow(gd)
    for f in failed:
        print("FAIL", f)
    print(f"{len(logs)} recorded logs, {len(failed)} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
