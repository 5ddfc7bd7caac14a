#!/usr/bin/env python3
"""Attacks on the kernel-log readers (issue 20, serious 2-4), each bounded in
size and time so CI runs them on 2 cores:

- a file truncated while `logs --from` reads it (was SIGBUS, rc 135: the
  reader mapped the file);
- `logs --follow` through copytruncate, rename rotation, and a truncate
  while it reads from the start;
- `--from` on a directory, /dev/zero, a FIFO with no writer and a file that
  vanishes: one-line errors or an empty log, never a crash or a hang;
- `logs` and `check` on a large generated log under 64 MiB peak RSS (was
  about 8x the input);
- a 1 GiB line before an Xid 79 (`logs --from`, kern.log, a recorded
  /dev/kmsg, `--follow`): the line is skipped and said so, the Xid found,
  memory bounded (the kmsg reader stopped at 64 MiB and missed the Xid);
- `serve` following 1M Xid events: RSS flat within 1 MiB (was +290 MB), the
  counters exact.

usage: kernlog_attacks.py GPUDOCTOR FAKES_DIR [-k NAME] [--sanitized] [--mib N]

--sanitized (ASan build): sizes shrink and memory is not judged (the
sanitizer's own allocations dominate). --mib: the large log's size (256).
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402  (tests/harness.py)
from harness import Skip  # noqa: E402

GD = None
FAKES = None
SANITIZED = False
MIB = 256
RSS_LIMIT_KB = 64 * 1024

XID = ("[{t:>12.6f}] NVRM: Xid (PCI:0000:{bus:02x}:00): {code}, pid='<unknown>', "
       "name=<unknown>, GPU has fallen off the bus.\n")
NOISE = "[{t:>12.6f}] audit: type=1400 audit({t:.3f}:1): apparmor=\"ALLOWED\" op=\"open\"\n"


def xid_block(lines, code=79, noise_every=0, t0=1.0):
    """lines of dmesg text: Xids on 4 GPUs, with a noise line every
    noise_every lines (0: none). Returns (text, xid count)."""
    out, xids = [], 0
    for i in range(lines):
        t = t0 + i * 1e-3
        if noise_every and i % noise_every:
            out.append(NOISE.format(t=t))
        else:
            out.append(XID.format(t=t, bus=0x17 + (i % 4), code=code))
            xids += 1
    return "".join(out), xids


def write_big(path, mib, noise_every):
    """About mib MiB of dmesg text; returns the Xid count (fast: one block
    written again and again)."""
    block, xids = xid_block(20000, noise_every=noise_every)
    reps = max(1, (mib << 20) // len(block))
    data = block.encode()
    with open(path, "wb") as f:
        for _ in range(reps):
            f.write(data)
    return xids * reps


def run_rss(args, timeout=120, env=None):
    """Runs GD args; returns (rc, stdout, peak RSS in KiB of that child, stderr)."""
    p = subprocess.Popen([GD] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = []
    t = threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True)
    t.start()
    err = []
    t2 = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    t2.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # wait4 reaps it with its own rusage (poll() must not reap it first).
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            t.join(5)
            t2.join(5)
            text = out[0].decode(errors="replace") if out else ""
            return p.returncode, text, ru.ru_maxrss, err[0].decode(errors="replace") if err else ""
        time.sleep(0.02)
    p.kill()
    raise AssertionError(f"{args} ran past {timeout} s")


def total_count(events_json, kind="xid"):
    return sum(e["count"] for e in json.loads(events_json)["events"] if e["kind"] == kind)


def reader_pos(pid, path):
    """The file position of pid's descriptor open on path; None when none."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") != path:
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    for line in f:
                        if line.startswith("pos:"):
                            return int(line.split()[1])
            except OSError:
                continue
    except OSError:
        return None
    return None


# --- logs --from -----------------------------------------------------------------


def test_logs_survives_truncate_mid_scan(tmp):
    """The file is cut to nothing while the reader is inside it (its file
    position past the start, short of the end): rc 0, no signal, and only
    what was read before the cut is counted."""
    log = os.path.join(tmp, "t.log")
    mib = 4 if SANITIZED else 64
    total = write_big(log, mib, noise_every=0)
    size = os.path.getsize(log)
    cut_mid = 0
    for attempt in range(4):
        if attempt:
            write_big(log, mib, noise_every=0)
        p = subprocess.Popen([GD, "logs", "--json", "--from", log], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        pos = None
        end = time.monotonic() + 30
        while time.monotonic() < end and p.poll() is None:
            pos = reader_pos(p.pid, log)
            if pos is not None and 0 < pos < size:
                os.truncate(log, 0)
                break
            time.sleep(0.0005)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, f"rc {p.returncode} (signal: negative): {err.decode()}"
        n = total_count(out)
        assert n <= total, (n, total)
        if pos is not None and 0 < pos < size:
            cut_mid += 1
            assert n < total, "the cut was mid-scan, yet every event was counted"
    assert cut_mid > 0, "the reader was never caught mid-file (too fast to attack?)"


def test_logs_refuses_devices_and_does_not_hang_on_a_fifo(tmp):
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    gone = os.path.join(tmp, "gone.log")
    with open(gone, "w") as f:
        f.write(xid_block(10)[0])
    cases = [
        (tmp, 3, "Is a directory"),
        ("/dev/zero", 3, "not a regular file or a pipe"),
        (fifo, 0, None),
        (os.path.join(tmp, "missing.log"), 3, "No such file"),
    ]
    for path, rc, text in cases:
        r = subprocess.run([GD, "logs", "--from", path], capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == rc, (path, r.returncode, r.stderr)
        if text:
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and text in lines[0], (path, r.stderr)
    # A file that vanishes while open is still read to its end.
    p = subprocess.Popen([GD, "logs", "--json", "--from", gone], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    os.unlink(gone)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0 or b"No such file" in err, (p.returncode, err)


def test_logs_memory_is_bounded_on_a_large_log(tmp):
    """Peak RSS of `logs --from` under 64 MiB on a large log, all Xid lines
    (every line decoded) and mostly noise; the counts exact."""
    mib = 4 if SANITIZED else MIB
    for noise_every, name in ((0, "xid"), (50, "mixed")):
        log = os.path.join(tmp, f"{name}.log")
        total = write_big(log, mib, noise_every)
        rc, out, rss_kb, err = run_rss(["logs", "--json", "--from", log])
        assert rc == 0, err
        assert total_count(out) == total, (name, total_count(out), total)
        size_kb = os.path.getsize(log) // 1024
        print(f"  logs {name}: {size_kb // 1024} MiB -> peak RSS {rss_kb // 1024} MiB")
        if not SANITIZED:
            assert rss_kb < RSS_LIMIT_KB, f"{name}: peak RSS {rss_kb} KiB on {size_kb} KiB"
        os.unlink(log)


def test_check_memory_is_bounded_on_a_large_kern_log(tmp):
    """`check --root` whose only kernel log is a large /var/log/kern.log."""
    mib = 4 if SANITIZED else MIB // 2
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "var", "log"))
    log = os.path.join(root, "var", "log", "kern.log")
    total = write_big(log, mib, noise_every=20)
    missing = os.path.join(tmp, "none.so")
    rc, out, rss_kb, err = run_rss(["check", "--json", "--root", root, "--nvml-lib", missing,
                                    "--cuda-lib", missing, "--cudart-lib", missing],
                                   env={"PATH": "/usr/bin:/bin"})
    assert rc in (0, 1, 2, 3), (rc, err)
    report = json.loads(out)
    probe = [p for p in report["probes"] if p["name"] == "kernel-log"]
    assert probe and probe[0]["status"] == "ok", probe
    # Every Xid is on one GPU (every 20th line, bus 0x17 + i % 4): one fold.
    evidence = [e for f in report["findings"] if f["id"] == "xid.79" for e in f["evidence"]]
    assert any(f": {total} times," in e for e in evidence), evidence
    print(f"  check: kern.log {os.path.getsize(log) >> 20} MiB ({total} Xids) -> peak RSS "
          f"{rss_kb // 1024} MiB")
    if not SANITIZED:
        assert rss_kb < RSS_LIMIT_KB, f"peak RSS {rss_kb} KiB"


# --- one over-long line ------------------------------------------------------------

# The readers hold at most 4 MiB of one line (klog::kMaxLineBytes): a longer
# line is passed over to its newline, counted, and the lines after it read.
# The old kmsg reader stopped at 64 MiB, so the line is made longer than
# that: 1 GiB as a hole in a sparse file (no disk, zeros to read, no
# newline), 80 MiB in the sanitized build.
LONG_LINE_BYTES = 1 << 30
LONG_XID = ("[ 2000.000000] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus.\n")


def write_long_line_log(path, head, tail):
    """head, then a line of LONG_LINE_BYTES (a sparse hole, read as zeros),
    then tail on the next line."""
    size = (80 << 20) if SANITIZED else LONG_LINE_BYTES
    with open(path, "wb") as f:
        f.write(head.encode())
        f.seek(len(head) + size)
        f.write(b"\n" + tail.encode())
    return size


def assert_small(what, rss_kb, size):
    print(f"  {what}: a {size >> 20} MiB line -> peak RSS {rss_kb // 1024} MiB")
    if not SANITIZED:
        assert rss_kb < RSS_LIMIT_KB, f"{what}: peak RSS {rss_kb} KiB on a {size >> 20} MiB line"


def test_overlong_line_is_skipped_not_the_rest(tmp):
    """A line longer than the reader holds, then an Xid 79: `logs --from`,
    `check --root` over /var/log/kern.log and over a recorded /dev/kmsg each
    find the Xid, say a line was skipped, and stay in bounded memory."""
    # logs --from: the text reader (and its parts, for a file this big).
    log = os.path.join(tmp, "long.log")
    size = write_long_line_log(log, XID.format(t=1.0, bus=0x17, code=13), LONG_XID)
    rc, out, rss_kb, err = run_rss(["logs", "--json", "--from", log])
    assert rc == 0, err
    report = json.loads(out)
    assert sorted(e["code"] for e in report["events"]) == [13, 79], report["events"]
    assert "1 line of 4 MiB or more" in report.get("skipped", ""), report.get("skipped")
    assert_small("logs --from", rss_kb, size)
    rc, out, _, err = run_rss(["logs", "--from", log])
    assert rc == 0 and "note: 1 line of 4 MiB or more" in out, (rc, out[:400], err)
    os.unlink(log)

    missing = os.path.join(tmp, "none.so")
    args = ["--nvml-lib", missing, "--cuda-lib", missing, "--cudart-lib", missing]
    env = {"PATH": "/usr/bin:/bin"}
    # check --root: /var/log/kern.log, and a recorded /dev/kmsg (one record a line).
    kern = ("/var/log/kern.log", XID.format(t=1.0, bus=0x17, code=13), LONG_XID)
    kmsg = ("/dev/kmsg", "4,1,1000000,-;NVRM: Xid (PCI:0000:17:00): 13, pid=1, name=x\n",
            "4,3,2000000000,-;NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', "
            "name=<unknown>, GPU has fallen off the bus.\n")
    for where, head, tail in (kern, kmsg):
        root = os.path.join(tmp, "root" + where.replace("/", "-"))
        path = root + where
        os.makedirs(os.path.dirname(path))
        size = write_long_line_log(path, head, tail)
        rc, out, rss_kb, err = run_rss(["check", "--json", "--root", root] + args, env=env)
        assert rc == 2, (where, rc, err[-400:])
        report = json.loads(out)
        by_id = {f["id"]: f for f in report["findings"]}
        assert by_id.get("xid.79", {}).get("severity") == "fail", (where, by_id.get("xid.79"))
        log_finding = by_id["kernel-log.unreadable"]
        assert log_finding["severity"] == "info", (where, log_finding)
        # No /dev/kmsg in the kern.log tree: the summary names the fallback too.
        assert "only in part" in log_finding["summary"], (where, log_finding)
        assert any("1 line of 4 MiB or more" in e for e in log_finding["evidence"]), log_finding
        probe = [p for p in report["probes"] if p["name"] == "kernel-log"][0]
        assert probe["status"] == "ok" and where in json.dumps(report["findings"]), (where, probe)
        assert_small(f"check {where}", rss_kb, size)
        shutil.rmtree(root)


# --- logs --follow -----------------------------------------------------------------


class Follower:
    """`gpudoctor logs --follow --json --from PATH`, its lines collected."""

    def __init__(self, path):
        self.p = subprocess.Popen([GD, "logs", "--follow", "--json", "--from", path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.events.append(json.loads(line))

    def wait(self, what, pred, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred(self.events):
                return
            assert self.p.poll() is None, f"follower died with rc {self.p.returncode}"
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; got {len(self.events)} events")

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        try:
            rc = self.p.wait(timeout=10)
        finally:
            if self.p.poll() is None:
                self.p.kill()
        return rc


def codes(events):
    return [e["code"] for e in events if e["kind"] == "xid"]


def append(path, code, t):
    with open(path, "a") as f:
        f.write(XID.format(t=t, bus=0x41, code=code))


def test_follow_goes_on_through_copytruncate_and_rotation(tmp):
    log = os.path.join(tmp, "kern.log")
    append(log, 79, 1.0)
    f = Follower(log)
    try:
        f.wait("the first Xid", lambda ev: codes(ev) == [79])
        # logrotate copytruncate: copy, then cut the file in place.
        shutil.copy(log, log + ".1")
        os.truncate(log, 0)
        time.sleep(0.5)  # the follower notices the shrink
        append(log, 48, 2.0)
        f.wait("the Xid after copytruncate", lambda ev: codes(ev) == [79, 48])
        # logrotate create: rename, then a new file.
        os.rename(log, log + ".2")
        append(log, 13, 3.0)
        f.wait("the Xid in the new file", lambda ev: codes(ev) == [79, 48, 13])
    finally:
        rc = f.stop()
    assert rc == 0, rc


def test_follow_skips_an_overlong_line(tmp):
    """--follow reads the long-line log from its start: the Xid after the
    line comes, and memory stays bounded (the line used to be held in 4 MiB
    pieces and decoded)."""
    log = os.path.join(tmp, "long.log")
    size = write_long_line_log(log, XID.format(t=1.0, bus=0x17, code=13), LONG_XID)
    f = Follower(log)
    try:
        f.wait("the Xid after the long line", lambda ev: codes(ev) == [13, 79], timeout=60)
        with open(f"/proc/{f.p.pid}/status") as st:  # VmHWM: its peak RSS so far
            rss = int([x for x in st if x.startswith("VmHWM:")][0].split()[1])
    finally:
        rc = f.stop()
    assert rc == 0, rc
    assert_small("logs --follow", rss, size)


def test_follow_survives_truncate_while_reading_from_start(tmp):
    """--follow reads a --from file from its start: cut it while that read is
    under way, then log again."""
    log = os.path.join(tmp, "kern.log")
    total = write_big(log, 2 if SANITIZED else 32, noise_every=0)
    f = Follower(log)
    try:
        f.wait("some events", lambda ev: len(ev) > 0)
        os.truncate(log, 0)
        time.sleep(0.5)
        append(log, 94, 5.0)
        f.wait("the Xid after the cut", lambda ev: 94 in codes(ev), timeout=60)
        assert len(codes(f.events)) <= total + 1
    finally:
        rc = f.stop()
    assert rc == 0, rc


# --- serve -----------------------------------------------------------------------

LISTENING = re.compile(r"^gpudoctor serve: listening on http://127\.0\.0\.1:(\d+)$")
KMSG_XID = ("4,{seq},{usec},-;NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
            "name=<unknown>, GPU has fallen off the bus.\n")
LABELS = '{bus_id="0000:18:00.0",xid="79"}'


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def xid_counter(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", "/metrics")
        body = c.getresponse().read().decode()
    finally:
        c.close()
    for line in body.splitlines():
        if line.startswith("gpudoctor_xid_events_total" + LABELS + " "):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


def test_serve_memory_flat_after_1m_followed_events(tmp):
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(SRC, "tests", "roots", "hgx-8xh100"), root, symlinks=True)
    kmsg = os.path.join(root, "dev", "kmsg")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests", "fakes", "scenarios",
                                                   "hgx-8xh100.json")}
    args = [GD, "serve", "--listen", "127.0.0.1:0", "--no-history", "--interval", "5s",
            # One check only: every check reads the whole recorded kmsg again.
            "--check-interval", "3600s", "--deadline", "5",
            "--root", root, "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
            "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        m = LISTENING.match(p.stderr.readline().rstrip("\n"))
        assert m, "no listening line"
        port = int(m.group(1))
        threading.Thread(target=p.stderr.read, daemon=True).start()
        seq = [10_000_000]

        def log(n):
            lines = []
            for _ in range(n):
                seq[0] += 1
                lines.append(KMSG_XID.format(seq=seq[0], usec=90_000_000_000 + seq[0]))
            with open(kmsg, "a") as f:
                f.write("".join(lines))

        def wait_count(n, timeout):
            end = time.monotonic() + timeout
            got = None
            while time.monotonic() < end:
                got = xid_counter(port)
                if got >= n:
                    return got
                time.sleep(0.1)
            raise AssertionError(f"Xid counter {got}, waited for {n}")

        # The follower starts after the first check, from the log's end:
        # log one event at a time until one is counted.
        end = time.monotonic() + 30
        base = xid_counter(port)
        while xid_counter(port) == base:
            assert time.monotonic() < end, "the follower never counted an event"
            log(1)
            time.sleep(0.3)
        time.sleep(0.5)
        start = xid_counter(port)
        warm, total = (2_000, 10_000) if SANITIZED else (200_000, 1_000_000)
        for _ in range(warm // 50_000 or 1):
            log(min(50_000, warm))
        wait_count(start + warm, 120)
        rss_warm = rss_kb(p.pid)
        for _ in range((total - warm) // 50_000 or 1):
            log(min(50_000, total - warm))
        got = wait_count(start + total, 300)
        assert got == start + total, (got, start + total)
        rss_end = rss_kb(p.pid)
        print(f"  serve: RSS {rss_warm} KiB after {warm} events, {rss_end} KiB after {total}")
        if not SANITIZED:
            assert rss_end - rss_warm <= 1024, f"RSS grew {rss_end - rss_warm} KiB"
        assert p.poll() is None
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def main():
    global GD, FAKES, SANITIZED, MIB
    args = sys.argv[1:]
    only = harness.take_k(args)
    if "--sanitized" in args:
        SANITIZED = True
        args.remove("--sanitized")
    if "--mib" in args:
        i = args.index("--mib")
        MIB = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 64
    GD, FAKES = os.path.abspath(args[0]), os.path.abspath(args[1])
    return harness.run_tests(globals(), only, tmp_prefix="gd-kernlog-")


if __name__ == "__main__":
    sys.exit(main())
