#!/usr/bin/env python3
"""History files (issue 20, "Smaller" 10), through the real store and the
real `gpudoctor history`: the writer (serve's store, driven by
tests/history/history_writer) and the reader take one verdict on a file,
before anything is written, and a damaged history is refused by both.

usage: history_files.py HISTORY_WRITER GPUDOCTOR [-k NAME]"""
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import run_tests, take_k  # noqa: E402

WRITER = GD = None
APPLICATION_ID = 0x47444853  # src/history/db.h


def writer(db):
    return subprocess.run([WRITER, "fixture", db], capture_output=True, text=True, timeout=60)


def reader(db):
    return subprocess.run([GD, "history", "--db", db, "--since", "2026-03-01"],
                          capture_output=True, text=True, timeout=60)


def header(db):
    with open(db, "rb") as f:
        return f.read(100)


def test_our_id_with_schema_0_is_refused_by_both_and_left_as_it_was(tmp):
    db = os.path.join(tmp, "foreign.db")
    c = sqlite3.connect(db)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    before = header(db)
    w, r = writer(db), reader(db)
    assert w.returncode != 0 and "schema version 0" in w.stdout + w.stderr, (w.stdout, w.stderr)
    assert r.returncode != 0 and "schema version 0" in r.stderr, r.stderr
    after = header(db)
    assert after[18:20] == b"\x01\x01", "switched to WAL before the verdict"
    assert after == before


def test_a_damaged_history_is_refused_by_both(tmp):
    db = os.path.join(tmp, "history.db")
    assert writer(db).returncode == 0
    assert reader(db).returncode == 0
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = int.from_bytes(header(db)[16:18], "big") or 65536
    with open(db, "r+b") as f:  # garble the table pages, keep the header and the schema page
        f.seek(page * 2)
        f.write(b"\xff" * page * 2)
    w, r = writer(db), reader(db)
    assert w.returncode != 0 and "damaged" in w.stdout + w.stderr, (w.stdout, w.stderr)
    assert r.returncode != 0, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def main():
    global WRITER, GD
    args = sys.argv[1:]
    only = take_k(args)
    if len(args) != 2:
        sys.exit(__doc__)
    WRITER, GD = (os.path.abspath(a) for a in args)
    return run_tests(globals(), only, tmp_prefix="gd-history-files-")


if __name__ == "__main__":
    sys.exit(main())
