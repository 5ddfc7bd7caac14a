#!/usr/bin/env python3
"""History files (issue 20, "Smaller" 10), through the real store and the
real `gpudoctor history`: the writer (serve's store, driven by
tests/history/history_writer) and the reader take one verdict on a file,
before anything is written, and a damaged history is refused by both; a
history damaged while `gpudoctor serve` writes it stops the writing with a
loud error, and a new file is started once it is moved aside.

usage: history_files.py HISTORY_WRITER GPUDOCTOR [-k NAME]"""
import json
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
from harness import Skip, run_tests, take_k  # noqa: E402

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


class Serve:
    """`gpudoctor serve --from` writing db every 0.2 s; its stderr lines
    collected as they come."""

    def __init__(self, db):
        self.proc = subprocess.Popen(
            [GD, "serve", "--listen", "127.0.0.1:0", "--from", SNAPSHOT, "--history", db,
             "--interval", "0.2s", "--check-interval", "0.2s"],
            env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(x.rstrip("\n")) for x in self.proc.stderr],
                         daemon=True).start()
        self.said = []
        self.port = int(re.search(r":(\d+)$", wait_for(
            "listening line", lambda: self.line_with("listening on"))).group(1))

    def lines_with(self, text):
        while not self.lines.empty():
            self.said.append(self.lines.get())
        return [x for x in self.said if text in x]

    def line_with(self, text):
        return next(iter(self.lines_with(text)), None)

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            return r.read().decode()

    def close(self):
        self.proc.kill()
        self.proc.wait(10)


def test_serve_stops_writing_a_history_damaged_under_it(tmp):
    db = os.path.join(tmp, "history.db")
    serve = Serve(db)
    try:
        wait_for("report in the history", lambda: reports(db))
        garble(db)
        stopped = wait_for("note that the history stopped",
                           lambda: serve.line_with("history stopped"))
        assert "damaged" in stopped and f"mv {db} {db}.damaged" in stopped, stopped
        assert "\ngpudoctor_history_ok 0\n" in serve.metrics(), "history_ok is not 0"
        with open(db, "rb") as f:
            damaged = f.read()
        time.sleep(1)  # five checks: each opens the file again, and is refused
        with open(db, "rb") as f:
            assert f.read() == damaged, "written to after it was found damaged"
        assert serve.proc.poll() is None, "serve stopped"
        assert len(serve.lines_with("damaged")) == 1, serve.said  # said once, not per check

        os.rename(db, db + ".damaged")
        wait_for("note that writing goes on", lambda: serve.line_with("writing again"))
        wait_for("report in the new history", lambda: reports(db))
    finally:
        serve.close()


def history_reports(db):
    """How many reports `gpudoctor history` counts in db (0: none, or unreadable)."""
    r = subprocess.run([GD, "history", "--history", db, "--json"], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        return 0
    return json.loads(r.stdout)["reports"]["count"]


def test_serve_starts_a_new_history_when_its_file_is_moved_or_deleted(tmp):
    # Issue 33, item 4: SQLite writes on into the inode it opened, so a
    # history moved or deleted under serve went on unseen (history_ok 1,
    # nothing printed, `gpudoctor history` found nothing).
    db = os.path.join(tmp, "history.db")
    serve = Serve(db)
    try:
        wait_for("report in the history", lambda: reports(db))
        other = os.path.join(tmp, "other.db")
        assert writer(other).returncode == 0
        other_inode = os.stat(other).st_ino
        for what, gone in (("moved or deleted", lambda: os.rename(db, db + ".moved")),
                           ("moved or deleted", lambda: os.remove(db)),
                           ("replaced by another file", lambda: os.rename(other, db))):
            note = f"gpudoctor serve: history {db}: {what} under the daemon; starting a new"
            before = len(serve.lines_with(note))
            gone()
            wait_for(f"note that the history was {what}",
                     lambda: len(serve.lines_with(note)) > before)
            # The current report at once (the other file's, of March, fall to --retention).
            wait_for(f"reports in the new history ({what})", lambda: history_reports(db) >= 1)
            time.sleep(1)  # five more checks: said once, not per check
            assert len(serve.lines_with(note)) == before + 1, serve.said
            assert "\ngpudoctor_history_ok 1\n" in serve.metrics()
        assert reports(db + ".moved") >= 1, "the moved file lost its reports"
        assert os.stat(db).st_ino == other_inode, "the replacing history was not written"
        assert serve.proc.poll() is None, "serve stopped"
    finally:
        serve.close()


def test_history_reads_a_database_on_a_read_only_mount(tmp):
    # Issue 33, item 6: a WAL history with no -shm beside it, on a mount no
    # one may write, could not be read (SQLite cannot build the WAL index);
    # `history` opens it read-only and immutable there.
    db = os.path.join(tmp, "ro", "history.db")
    os.makedirs(os.path.dirname(db))
    assert writer(db).returncode == 0
    assert not os.path.exists(db + "-shm"), "the writer left its -shm behind"
    want = reader(db)
    assert want.returncode == 0, want.stderr
    assert not os.path.exists(db + "-shm"), "the reader left its -shm behind"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise Skip("no mount namespace here (unshare -m: " + probe.stderr.strip()[:80] +
                   "); needs root or CAP_SYS_ADMIN")
    d = os.path.dirname(db)
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && '
              '! touch "$1/x" 2>/dev/null && shift && exec "$@"')
    got = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                          d, GD, "history", "--history", db, "--since", "2026-03-01"],
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, (got.returncode, got.stderr)

    def stored(text):  # the window's "until" is the clock's: the runs may be seconds apart
        return [line for line in text.splitlines() if not line.startswith("Window: ")]
    assert stored(got.stdout) == stored(want.stdout), (got.stdout, want.stdout)
    assert "Reports: 145," in got.stdout, got.stdout
    assert not os.path.exists(db + "-shm"), "wrote beside a read-only history"


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
