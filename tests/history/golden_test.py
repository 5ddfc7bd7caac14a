#!/usr/bin/env python3
"""`gpudoctor history` over a fixed story (history_writer fixture: reports
every 15 minutes over 2026-03-01..02 UTC, GPU 3 falling off the bus before
and after a reboot), text and JSON against tests/history/golden/, plus the
answers themselves and the errors.

  golden_test.py HISTORY_WRITER GPUDOCTOR [--update]

Times print in local time: the test runs with TZ=UTC. "Now" is fixed with
the hidden, testing-only --now flag.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import golden  # noqa: E402  (tests/golden.py)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
NOW = "2026-03-02T12:00:00Z"
ENV = dict(os.environ, TZ="UTC", LC_ALL="C")
GPU3_UUID = "GPU-00000000-0000-0000-0000-000000000003"

CASES = [  # name, flags, extension
    ("all", [], "txt"),
    ("since-1d", ["--since", "1d"], "txt"),
    ("since-yesterday", ["--since", "yesterday"], "json"),
    ("gpu3", ["--gpu", "3"], "txt"),
    ("gpu3", ["--gpu", "3"], "json"),
    ("gpu3-since", ["--gpu", "3", "--since", "2026-03-02T04:00"], "txt"),
]


def run(gpudoctor, db, flags):
    return subprocess.run([gpudoctor, "history", "--history", db, "--now", NOW] + flags,
                          capture_output=True, text=True, env=ENV, timeout=60)


def main():
    writer, gpudoctor = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    failures = []
    tmp = tempfile.mkdtemp(prefix="gd-history-")
    try:
        db = os.path.join(tmp, "history.db")
        subprocess.run([writer, "fixture", db], check=True, timeout=60)

        outputs = {}
        for name, flags, ext in CASES:
            p = run(gpudoctor, db, flags + (["--json"] if ext == "json" else []))
            if p.returncode != 0 or p.stderr:
                failures.append(f"{name}.{ext}: exit {p.returncode}: {p.stderr.strip()}")
                continue
            out = p.stdout.replace(db, "HISTORY.db")
            outputs[(name, ext)] = out
            golden.compare(GOLDEN, name, ext, out, update, failures)

        # The question itself: when did GPU 3 start throwing Xid 79?
        if ("gpu3", "json") in outputs:
            h = json.loads(outputs[("gpu3", "json")])
            xid79 = [e for e in h["events"] if e["kind"] == "xid" and e["code"] == 79]
            want = {"gpu": "0000:9b:00.0", "first_seen": "2026-03-02T03:14:07.000Z",
                    "last_seen": "2026-03-02T09:00:00.000Z", "count": 4, "boots": 2}
            if len(xid79) != 1 or any(xid79[0][k] != v for k, v in want.items()):
                failures.append(f"gpu3: Xid 79 is {xid79}, expected {want}")
            if h["gpu"]["bus_id"] != "0000:9b:00.0" or h["gpu"]["uuid"] != GPU3_UUID:
                failures.append(f"gpu3: --gpu 3 resolved to {h['gpu']}")
            if any(e["gpu"] != "0000:9b:00.0" for e in h["events"]):
                failures.append("gpu3: events of other GPUs shown")

        # What changed since yesterday: the fall, its clearing, the reboot's Xids.
        if ("since-yesterday", "json") in outputs:
            h = json.loads(outputs[("since-yesterday", "json")])
            seen = {(c["change"], (c.get("finding") or {}).get("id") or
                     (c.get("event") or {}).get("kind") or c.get("to")) for c in h["changes"]}
            for want in [("appeared", "gpu.fallen-off-bus"), ("cleared", "gpu.fallen-off-bus"),
                         ("verdict", "fail"), ("event", "xid"), ("appeared", "xid.13"),
                         ("changed", "thermal.high")]:
                if want not in seen:
                    failures.append(f"since-yesterday: no {want} in changes")
            if h["since"] != "2026-03-01T00:00:00.000Z":
                failures.append(f"since-yesterday: since {h['since']}")

        # The same GPU by UUID and by nvidia-smi's spelling of its bus id.
        for flags in (["--gpu", GPU3_UUID.lower()], ["--gpu", "00000000:9B:00.0"],
                      ["--gpu", "9b:00.0"]):
            p = run(gpudoctor, db, flags)
            if p.returncode != 0 or p.stdout.replace(db, "HISTORY.db") != outputs.get(("gpu3", "txt")):
                failures.append(f"{flags}: differs from --gpu 3 (exit {p.returncode})")

        # Errors: one line, the right exit code.
        garbage = os.path.join(tmp, "garbage.db")
        with open(garbage, "wb") as f:
            f.write(b"this is not a database\n" * 200)
        other = os.path.join(tmp, "other.db")
        con = sqlite3.connect(other)
        con.execute("CREATE TABLE t (x)")
        con.commit()
        con.close()
        newer = os.path.join(tmp, "newer.db")
        shutil.copy(db, newer)
        con = sqlite3.connect(newer)
        con.execute("PRAGMA user_version = 99")
        con.commit()
        con.close()
        errors = [  # db, flags, exit, stderr must contain
            (os.path.join(tmp, "none", "history.db"), [], 3, "no history at"),
            (garbage, [], 3, "not a gpudoctor history (not an SQLite database)"),
            (other, [], 3, "not a gpudoctor history (an SQLite database of another program)"),
            (newer, [], 3, "written by a newer gpudoctor"),
            (tmp, [], 3, "is a directory"),
            (db, ["--since", "soon"], 64, "bad --since 'soon'"),
            (db, ["--since", "2026-02-30"], 64, "bad date '2026-02-30'"),
            (db, ["--gpu", "7"], 64, "no GPU with that index"),
            (db, ["--gpu", "GPU-nope"], 64, "no GPU with that UUID"),
            (db, ["--gpu", "zz"], 64, "give a PCI bus id"),
        ]
        for path, flags, code, text in errors:
            p = run(gpudoctor, path, flags)
            lines = p.stderr.splitlines()
            if p.returncode != code or len(lines) != 1 or text not in p.stderr \
                    or not p.stderr.startswith("gpudoctor: ") or p.stdout:
                failures.append(f"{os.path.basename(path)} {flags}: exit {p.returncode}, "
                                f"stderr {p.stderr!r}; expected {code} and {text!r}")
        # Refused files are left as they were.
        con = sqlite3.connect(other)
        if [r[0] for r in con.execute("SELECT name FROM sqlite_master")] != ["t"]:
            failures.append("other.db was written into")
        con.close()

        p = subprocess.run([gpudoctor, "history", "--help"], capture_output=True, text=True)
        if p.returncode != 0 or "--since" not in p.stdout or "--now" in p.stdout:
            failures.append(f"--help: exit {p.returncode}: {p.stdout[:200]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"history golden: {len(CASES)} outputs{' updated' if update else ' match'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
