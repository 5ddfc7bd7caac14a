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


def since(gd):
    """`logs --from F --since 2026-01-01` (issue 37): the events are judged by
    the dates their lines give, not by their age before the log's last line;
    the lines with no date (dmesg's seconds since boot) are shown and counted
    in one note. A syslog log across New Year dates December in the year
    before its file was written."""
    xid = ("{} NVRM: Xid (PCI:{}): {}, pid='<unknown>', name=<unknown>, "
           "GPU has fallen off the bus.\n")
    text = (xid.format("2025-11-03T08:00:00.000000+00:00 node7 kernel:", "0000:17:00", 79) +
            xid.format("[  811.239125]", "0000:41:00", 48) +
            xid.format("[  812.000000]", "0000:41:00", 48) +
            xid.format("2026-02-10T09:30:00.000000+00:00 node7 kernel:", "0000:3b:00", 13))
    note = ("note: --since does not apply to 2 event lines that carry no date (dmesg's seconds "
            "since boot, or no time at all): they are shown\n")
    failures = []

    def logs(*args, stdin=None):
        p = subprocess.run([gd, "logs", *args], capture_output=True, text=True, timeout=60,
                           input=stdin)
        if p.returncode != 0:
            failures.append(f"since: logs {' '.join(args)} exited {p.returncode}: {p.stderr}")
        return p.stdout

    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "mixed.log"
        log.write_text(text)
        for source, stdin in ((str(log), None), ("-", text)):
            out = logs("--from", source, "--since", "2026-01-01", stdin=stdin)
            codes = [line.split()[1] for line in out.splitlines() if line.startswith("Xid ")]
            if sorted(codes) != ["13", "48"]:
                failures.append(f"since {source}: Xids {codes}, not 13 and 48:\n{out}")
            if out.count(note) != 1 or out.count("--since") != 1:
                failures.append(f"since {source}: not one note on the undated lines:\n{out}")
            doc = json.loads(logs("--from", source, "--since", "2026-01-01", "--json",
                                  stdin=stdin))
            got = sorted((e["code"], e["count"]) for e in doc["events"])
            if got != [(13, 1), (48, 2)]:
                failures.append(f"since {source} --json: events {got}")
            if (doc.get("since"), doc.get("since_undated")) != ("2026-01-01T00:00:00Z", 2):
                failures.append(f"since {source} --json: since {doc.get('since')}, "
                                f"since_undated {doc.get('since_undated')}")
        # Without --since: every event, no note, no since keys.
        out = logs("--from", str(log))
        if out.count("\nXid ") != 3 or "--since" in out:
            failures.append(f"no since: {out}")
        if "since" in json.loads(logs("--from", str(log), "--json")):
            failures.append("no since: --json has a since key")
        # journalctl's stamps print no year: written on 2026-01-03, December is 2025's.
        journal = pathlib.Path(tmp) / "journal.log"
        journal.write_text(xid.format("Dec 30 23:59:01 node7 kernel:", "0000:17:00", 79) +
                           xid.format("Jan 02 10:00:01 node7 kernel:", "0000:3b:00", 13))
        os.utime(journal, (1767441600, 1767441600))
        doc = json.loads(logs("--from", str(journal), "--since", "2026-01-01", "--json"))
        got = [(e["code"], e["first"]) for e in doc["events"]]
        if got != [(13, "2026-01-02T10:00:01Z")] or doc.get("since_undated") != 0:
            failures.append(f"since journal: {got}, since_undated {doc.get('since_undated')}")
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
    failed += since(gd)
    for f in failed:
        print("FAIL", f)
    print(f"{len(logs)} recorded logs, {len(failed)} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
