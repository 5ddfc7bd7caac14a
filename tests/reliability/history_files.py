#!/usr/bin/env python3
"""History files (issue 20, "Smaller" 10), through the real store and the
real `gpudoctor history`: the writer (serve's store, driven by
tests/history/history_writer) and the reader take one verdict on a file,
before anything is written, and a damaged history is refused by both; a
history damaged while `gpudoctor serve` writes it stops the writing with a
loud error, and a new file is started once it is moved aside.

usage: history_files.py HISTORY_WRITER GPUDOCTOR [-k NAME]"""
import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import run_tests, take_k  # noqa: E402

WRITER = GD = None
APPLICATION_ID = 0x47444853  # src/history/db.h
SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "snapshots",
                        "ws-4x4090.json")


def writer(db):
    return subprocess.run([WRITER, "fixture", db], capture_output=True, text=True, timeout=60)


def reader(db):
    return subprocess.run([GD, "history", "--history", db, "--since", "2026-03-01"],
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


def garble(db):
    """Checkpoints db (which also makes every connection drop its cached
    pages) and overwrites its table pages, keeping the header and the schema
    page."""
    c = sqlite3.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    page = int.from_bytes(header(db)[16:18], "big") or 65536
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.seek(page)
        f.write(b"\xff" * max(page * 2, size - page))


def reports(db):
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT count(*) FROM reports").fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_for(what, fn, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {seconds} s")


def test_a_damaged_history_is_refused_by_both(tmp):
    db = os.path.join(tmp, "history.db")
    assert writer(db).returncode == 0
    assert reader(db).returncode == 0
    garble(db)
    w, r = writer(db), reader(db)
    assert w.returncode != 0 and "damaged" in w.stdout + w.stderr, (w.stdout, w.stderr)
    assert r.returncode != 0, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_serve_stops_writing_a_history_damaged_under_it(tmp):
    db = os.path.join(tmp, "history.db")
    proc = subprocess.Popen(
        [GD, "serve", "--listen", "127.0.0.1:0", "--from", SNAPSHOT, "--history", db,
         "--interval", "0.2s", "--check-interval", "0.2s"],
        env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.rstrip("\n")) for x in proc.stderr],
                     daemon=True).start()
    said = []

    def line_with(text):
        while not lines.empty():
            said.append(lines.get())
        return next((x for x in said if text in x), None)

    try:
        port = int(re.search(r":(\d+)$", wait_for("listening line",
                                                   lambda: line_with("listening on"))).group(1))
        wait_for("report in the history", lambda: reports(db))
        garble(db)
        stopped = wait_for("note that the history stopped", lambda: line_with("history stopped"))
        assert "damaged" in stopped and f"mv {db} {db}.damaged" in stopped, stopped
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            assert "\ngpudoctor_history_ok 0\n" in r.read().decode(), "history_ok is not 0"
        with open(db, "rb") as f:
            damaged = f.read()
        time.sleep(1)  # five checks: each opens the file again, and is refused
        with open(db, "rb") as f:
            assert f.read() == damaged, "written to after it was found damaged"
        assert proc.poll() is None, "serve stopped"
        assert len([x for x in said if "damaged" in x]) == 1, said  # said once, not per check

        os.rename(db, db + ".damaged")
        wait_for("note that writing goes on", lambda: line_with("writing again"))
        wait_for("report in the new history", lambda: reports(db))
    finally:
        proc.kill()
        proc.wait(10)


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
