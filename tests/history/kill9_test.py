#!/usr/bin/env python3
"""A kill -9 at any moment loses nothing that was committed and leaves a
readable history (src/history/store.h, docs/history.md).

  kill9_test.py HISTORY_WRITER GPUDOCTOR

history_writer loop DB commits a report, prints "report N", commits the
kernel events, prints "events N", and prunes now and then, forever. It is
killed with SIGKILL at random moments (some before its first commit, while
it creates and migrates the file), ROUNDS times. After each kill:
- PRAGMA integrity_check says ok,
- `gpudoctor history --history DB --json` reads it (exit 0),
- every report acknowledged is there with no hole since the last prune, and
  the event's stored count is at least the last acknowledged one,
- the next writer resumes after the last commit.
GD_KILL9_SEED replays a run (the seed is printed).
"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROUNDS = 20
BASE_MS = 1_700_000_000_000  # history_writer.cc kLoopBaseMs


def read_lines(stream, out):
    for line in stream:
        out.append(line.strip())


def check(db, gpudoctor, acked_report, acked_events, failures, round_no):
    where = f"round {round_no}"
    if not os.path.exists(db):
        if acked_report:
            failures.append(f"{where}: {db} is gone after {acked_report} acknowledged reports")
        return
    # gpudoctor history first: after a kill its reader is the one that finds
    # the WAL index to rebuild (a read-only connection cannot).
    p = subprocess.run([gpudoctor, "history", "--history", db, "--json"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        # Killed before the first commit: the file may still be blank.
        blank = acked_report == 0 and "empty database" in p.stderr
        if not blank:
            failures.append(f"{where}: gpudoctor history exit {p.returncode}: {p.stderr.strip()}")
    else:
        out = json.loads(p.stdout)
        if out["schema"] != "gpudoctor.history/v1" or out["reports"]["count"] < min(acked_report, 1):
            failures.append(f"{where}: gpudoctor history says {out['reports']}")

    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True)
    con.execute("PRAGMA query_only = ON")
    try:
        result = con.execute("PRAGMA integrity_check").fetchall()
        if result != [("ok",)]:
            failures.append(f"{where}: integrity_check: {result}")
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            if acked_report:
                failures.append(f"{where}: no tables after {acked_report} acknowledged reports")
            return
        # Every acknowledged report since the latest prune that may have run
        # (prune at n % 100 == 0 keeps the newest 500) is there, no holes.
        last_prune = (acked_report + 1) // 100 * 100
        lo = max(1, last_prune - 500)
        if acked_report >= lo:
            n = con.execute(
                "SELECT count(*) FROM reports WHERE time_ms >= ? AND time_ms <= ?",
                (BASE_MS + lo * 1000, BASE_MS + acked_report * 1000)).fetchone()[0]
            if n != acked_report - lo + 1:
                failures.append(f"{where}: {n} reports numbered {lo}..{acked_report}, "
                                f"expected {acked_report - lo + 1}")
        rows = con.execute("SELECT count FROM events WHERE boot = 'loop-boot'").fetchall()
        if acked_events and (len(rows) != 1 or rows[0][0] < acked_events):
            failures.append(f"{where}: event rows {rows}, acknowledged count {acked_events}")
        orphans = con.execute("SELECT count(*) FROM findings WHERE report_id NOT IN "
                              "(SELECT id FROM reports)").fetchone()[0]
        if orphans:
            failures.append(f"{where}: {orphans} findings without their report")
    finally:
        con.close()


def main():
    writer, gpudoctor = sys.argv[1], sys.argv[2]
    seed = int(os.environ.get("GD_KILL9_SEED", time.time_ns() % (1 << 32)))
    print(f"kill9: seed {seed} (GD_KILL9_SEED={seed} replays it)")
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="gd-kill9-")
    failures = []
    acked_report = acked_events = 0
    try:
        # The directory too is the store's to create.
        db = os.path.join(tmp, "state", "gpudoctor", "history.db")
        for round_no in range(1, ROUNDS + 1):
            proc = subprocess.Popen([writer, "loop", db], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            lines = []
            reader = threading.Thread(target=read_lines, args=(proc.stdout, lines))
            reader.start()
            # Every fourth round dies within its first milliseconds: during
            # the open, the WAL switch, the migration or the first commit.
            time.sleep(rng.uniform(0, 0.01) if round_no % 4 == 1 else rng.uniform(0.02, 0.6))
            proc.kill()
            proc.wait()
            reader.join()
            err = proc.stderr.read()
            proc.stderr.close()
            if proc.returncode != -9:
                failures.append(f"round {round_no}: the writer exited {proc.returncode} before "
                                f"the kill: {err.strip()}")
                break
            numbers = {"report": [], "events": []}
            for line in lines:
                what, _, n = line.partition(" ")
                if what in numbers and n.isdigit():
                    numbers[what].append(int(n))
            if numbers["report"] and numbers["report"][0] <= acked_report:
                failures.append(f"round {round_no}: resumed at report {numbers['report'][0]}, "
                                f"but {acked_report} was already committed")
            acked_report = max([acked_report] + numbers["report"])
            acked_events = max([acked_events] + numbers["events"])
            check(db, gpudoctor, acked_report, acked_events, failures, round_no)
            if failures:
                break
        print(f"kill9: {ROUNDS} kills, {acked_report} reports acknowledged")
        if acked_report < 50:
            failures.append(f"only {acked_report} reports in {ROUNDS} rounds: the writer is "
                            "too slow for the test to mean much")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
