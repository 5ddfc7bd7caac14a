#!/usr/bin/env python3
"""Memory of `gpudoctor serve` under Range floods (issue 20, serious 1).

Starts `gpudoctor serve --from tests/snapshots/ws-4x4090.json` and measures
the daemon's memory (/proc/PID/status) for requests to /metrics:

  baseline  the same number of plain GETs, first, on the same daemon;
  attack    GETs carrying `Range: bytes=0-,0-,...` (RANGES ranges, about 8 KB,
            the issue's request), 8 at a time.

It prints, against the request and body sizes, the peak RSS (VmHWM) growth
of each phase and what httplib's own Range handling would have sent
(body x ranges). Goal: one Range request costs under 1 MiB extra; the attack
phase's peak growth is under 1 MiB.

usage: bench/serve_range.py [GPUDOCTOR] [--requests N] [--ranges R]"""
import argparse
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reliability"))
import http_attacks as h  # noqa: E402  (its Daemon and raw-socket client)


def phase(d, n, headers):
    before = d.status_kib("VmHWM")
    t0 = time.monotonic()

    def run(k):
        for _ in range(k):
            status, _, _ = h.request(d.port, headers=headers, timeout=30)
            assert status == 200, status

    ts = [threading.Thread(target=run, args=(n // 8,)) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return d.status_kib("VmHWM") - before, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor", nargs="?", default=os.path.join(HERE, "..", "build", "gpudoctor"))
    ap.add_argument("--requests", type=int, default=256)
    ap.add_argument("--ranges", type=int, default=2660)
    a = ap.parse_args()
    h.GD = os.path.abspath(a.gpudoctor)
    rng = "bytes=" + ",".join(["0-"] * a.ranges)
    with h.Daemon() as d:
        body = len(h.request(d.port)[2])
        rss0 = d.status_kib("VmRSS")
        h.request(d.port, headers=(("Range", rng),))
        one = d.status_kib("VmRSS") - rss0
        phase(d, 64, ())  # threads and the allocator's first pages, for both phases
        phase(d, 64, (("Range", rng),))
        base, tb = phase(d, a.requests, ())
        att, ta = phase(d, a.requests, (("Range", rng),))
        print(f"/metrics body {body} bytes; Range header {len(rng)} bytes ({a.ranges} ranges); "
              f"httplib's own handling would send {body * a.ranges / 2**20:.1f} MiB per request")
        print(f"one Range request on a fresh daemon: RSS +{one} KiB")
        print(f"baseline {a.requests} plain GETs, 8 at a time:   peak RSS +{base} KiB, {tb:.2f} s")
        print(f"attack   {a.requests} Range GETs, 8 at a time:   peak RSS +{att} KiB, {ta:.2f} s")
        ok = one < 1024 and att < 1024
        print("goal (under 1 MiB extra):", "met" if ok else "MISSED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
