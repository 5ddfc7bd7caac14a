#!/usr/bin/env python3
"""Peak memory of `gpudoctor logs --from` (and `check` on a kern.log)
against the size of the log (issue 20: under 64 MiB on 1 GiB of any log).

For each size it generates a log of dmesg lines, either all Xids (every
line decoded: the worst case) or mixed (one Xid in 50 lines), and runs:

  gpudoctor logs --json --from LOG   peak RSS (wait4's ru_maxrss), time
  grep -c NVRM LOG                   the baseline: a streaming reader

and checks that the Xid count gpudoctor prints equals the count it wrote.
The goal: gpudoctor's peak RSS under 64 MiB at every size, flat against the
size (as grep's is).

usage: logs_rss.py GPUDOCTOR [--sizes 64,256,1024] [--kinds xid,mixed] [--check]
       (sizes in MiB; --check also runs `check --root` with the log as the
       root's /var/log/kern.log)
Exit status 1 when a goal is missed or a count is wrong.
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

GOAL_KB = 64 * 1024
XID = ("[{t:>12.6f}] NVRM: Xid (PCI:0000:{bus:02x}:00): 79, pid='<unknown>', "
       "name=<unknown>, GPU has fallen off the bus.\n")
NOISE = "[{t:>12.6f}] audit: type=1400 audit({t:.3f}:1): apparmor=\"ALLOWED\" op=\"open\"\n"


def generate(path, mib, noise_every):
    lines, xids = [], 0
    for i in range(20000):
        t = 1.0 + i * 1e-3
        if noise_every and i % noise_every:
            lines.append(NOISE.format(t=t))
        else:
            lines.append(XID.format(t=t, bus=0x17 + i % 4))
            xids += 1
    block = "".join(lines).encode()
    reps = max(1, (mib << 20) // len(block))
    with open(path, "wb") as f:
        for _ in range(reps):
            f.write(block)
    return xids * reps


def measure(cmd, env=None):
    """(rc, stdout, peak RSS KiB, seconds) of one run. The peak is the
    child's own VmHWM (its mm after exec), read from /proc until it exits:
    wait4's ru_maxrss would include the copy of this Python process the
    fork made before exec (a floor of 14-22 MiB)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    hwm = [0]

    def sample():
        while True:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm[0] = max(hwm[0], int(line.split()[1]))
            except OSError:
                return
            time.sleep(0.005)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out = p.stdout.read()
    p.wait()
    t.join(1)
    return p.returncode, out, hwm[0], time.monotonic() - start


def main():
    args = sys.argv[1:]
    sizes, kinds, with_check = [64, 256, 1024], ["xid", "mixed"], False
    if "--sizes" in args:
        i = args.index("--sizes")
        sizes = [int(s) for s in args[i + 1].split(",")]
        del args[i:i + 2]
    if "--kinds" in args:
        i = args.index("--kinds")
        kinds = args[i + 1].split(",")
        del args[i:i + 2]
    if "--check" in args:
        with_check = True
        args.remove("--check")
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 64
    gd = os.path.abspath(args[0])
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}")
    print(f"goal: peak RSS < {GOAL_KB // 1024} MiB at every size\n")
    print(f"{'log':>6} {'MiB':>5} {'Xids':>10} | {'gpudoctor logs':>24} | "
          f"{'grep -c NVRM (baseline)':>24}" + (f" | {'gpudoctor check':>24}" if with_check else ""))
    ok = True
    with tempfile.TemporaryDirectory(prefix="gd-logs-rss-") as tmp:
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "var", "log"))
        log = os.path.join(root, "var", "log", "kern.log")
        missing = os.path.join(tmp, "none.so")
        for kind in kinds:
            for mib in sizes:
                xids = generate(log, mib, 0 if kind == "xid" else 50)
                rc, out, rss, secs = measure([gd, "logs", "--json", "--from", log])
                count = sum(e["count"] for e in json.loads(out)["events"]) if rc == 0 else -1
                grc, gout, grss, gsecs = measure(["grep", "-c", "NVRM", log])
                row = (f"{kind:>6} {os.path.getsize(log) >> 20:>5} {xids:>10} | "
                       f"{rss / 1024:>7.1f} MiB {secs:>6.2f} s {'ok' if count == xids else 'BAD':>4} | "
                       f"{grss / 1024:>7.1f} MiB {gsecs:>6.2f} s {int(gout or 0) == xids and 'ok' or 'BAD':>4}")
                ok &= rc == 0 and count == xids and rss < GOAL_KB
                if with_check:
                    crc, _, crss, csecs = measure(
                        [gd, "check", "--json", "--root", root, "--nvml-lib", missing,
                         "--cuda-lib", missing, "--cudart-lib", missing],
                        env={"PATH": "/usr/bin:/bin"})
                    row += f" | {crss / 1024:>7.1f} MiB {csecs:>6.2f} s rc {crc}"
                    ok &= crss < GOAL_KB
                print(row, flush=True)
    print(f"\ngoal: {'holds' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
