#!/usr/bin/env python3
"""Checks deploy/systemd/gpudoctor.service (docs/systemd.md):

1. every hardening directive docs/systemd.md relies on is set as stated, and
   none of those that would break the probes (ProtectKernelLogs=, ...) is;
2. `gpudoctor serve --help` lists every flag of ExecStart, and the daemon
   started with exactly those flags (a loopback port of its own, a temporary
   history, a recorded snapshot instead of NVML) serves /healthz and exits 0
   on SIGTERM;
3. `systemd-analyze verify` accepts the unit with no warning (ExecStart
   pointed at the built binary: verify wants an executable there), and
   `systemd-analyze security --offline=yes` rates its exposure at most 3.0.
   Both run without systemd as PID 1; skipped when systemd-analyze is absent.

usage: check_unit.py GPUDOCTOR
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
UNIT = os.path.join(HERE, "gpudoctor.service")
SNAPSHOT = os.path.join(SRC, "tests", "diff", "nodes", "gpu-node-01.json")
MAX_EXPOSURE = 3.0

# (section, key) -> the value the unit must have (every occurrence).
REQUIRED = {
    ("Service", "Type"): "exec",
    ("Service", "Restart"): "on-failure",
    ("Service", "DynamicUser"): "yes",
    ("Service", "NoNewPrivileges"): "yes",
    ("Service", "ProtectSystem"): "strict",
    ("Service", "StateDirectory"): "gpudoctor",
    ("Service", "ProtectHome"): "yes",
    ("Service", "PrivateTmp"): "yes",
    ("Service", "ProtectKernelTunables"): "yes",
    ("Service", "ProtectKernelModules"): "yes",
    ("Service", "ProtectControlGroups"): "yes",
    ("Service", "RestrictAddressFamilies"): "AF_UNIX AF_INET AF_INET6",
    ("Service", "CapabilityBoundingSet"): "CAP_SYSLOG",
    ("Service", "AmbientCapabilities"): "CAP_SYSLOG",
    ("Service", "SystemCallErrorNumber"): "EPERM",
    ("Service", "UMask"): "0077",
}
# Present with any value.
PRESENT = [("Service", "MemoryMax"), ("Service", "SystemCallFilter"),
           ("Install", "WantedBy")]
# Each would blind a probe (docs/systemd.md says which).
FORBIDDEN = {
    "ProtectKernelLogs": "yes",        # /dev/kmsg
    "PrivateDevices": "yes",           # /dev/nvidia*
    "ProtectProc": "invisible",        # nv-fabricmanager's /proc/PID
    "ProcSubset": "pid",               # /proc/driver/nvidia
    "MemoryDenyWriteExecute": "yes",   # closed driver libraries
    "PrivateUsers": "yes",             # device node ownership
    "Type": "notify",                  # the daemon has no sd_notify
}


def parse_unit(path):
    """[(section, key, value)] in file order; keys may repeat."""
    out, section = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            key, _, value = line.partition("=")
            out.append((section, key.strip(), value.strip()))
    return out


def check_directives(entries, failures):
    values = {}
    for section, key, value in entries:
        values.setdefault((section, key), []).append(value)
    for (section, key), want in REQUIRED.items():
        got = values.get((section, key))
        if not got:
            failures.append(f"[{section}] {key}= missing (want {want})")
        elif any(v != want for v in got):
            failures.append(f"[{section}] {key}={got}, want {want}")
    for section, key in PRESENT:
        if (section, key) not in values:
            failures.append(f"[{section}] {key}= missing")
    for section, key, value in entries:
        if FORBIDDEN.get(key) == value:
            failures.append(f"[{section}] {key}={value} would break the probes")
    return values


def exec_start(values, failures):
    got = values.get(("Service", "ExecStart"), [])
    if len(got) != 1:
        failures.append(f"expected one ExecStart=, got {len(got)}")
        return None
    # ${VAR} from Environment= (what a node gets without /etc/default/gpudoctor).
    env = dict(e.split("=", 1) for e in values.get(("Service", "Environment"), []))
    line = re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), m.group(0)), got[0])
    argv = shlex.split(line)
    if argv[:2] != ["/usr/local/bin/gpudoctor", "serve"]:
        failures.append(f"ExecStart does not run `gpudoctor serve`: {got[0]}")
        return None
    # "$GPUDOCTOR_ARGS" alone is a word systemd drops when the variable is unset.
    unresolved = [a for a in argv[2:] if a.startswith("${")]
    if unresolved:
        failures.append(f"ExecStart uses {unresolved} with no Environment= default")
    return [a for a in argv[2:] if not a.startswith("$")]


def flag_values(args):
    """{--flag: value} for "--flag value" and "--flag=value"."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            out[k] = v
        elif a.startswith("--") and i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[a] = args[i + 1]
            i += 1
        elif a.startswith("--"):
            out[a] = None
        i += 1
    return out


def check_flags(gd, args, values, failures):
    flags = flag_values(args)
    listen = flags.get("--listen", "")
    if not listen.startswith("127.0.0.1:") and not listen.startswith("[::1]:"):
        failures.append(f"--listen {listen}: the unit must listen on loopback by default")
    state = "/var/lib/" + values.get(("Service", "StateDirectory"), ["?"])[0] + "/"
    if not (flags.get("--history") or "").startswith(state):
        failures.append(f"--history {flags.get('--history')} is not under {state} "
                        "(the only writable path under ProtectSystem=strict)")
    help_text = subprocess.run([gd, "serve", "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    for flag in flags:
        if not re.search(re.escape(flag) + r"\b", help_text):
            failures.append(f"ExecStart flag {flag} is not in `gpudoctor serve --help`")
    return flags


def run_daemon(gd, flags, failures):
    """The daemon with the unit's flags, on a port of its own; SIGTERM stops it."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [gd, "serve"]
        for k, v in flags.items():
            if k == "--listen":
                v = "127.0.0.1:0"
            elif k == "--history":
                v = os.path.join(tmp, "history.db")
            argv += [k] if v is None else [k, v]
        argv += ["--from", SNAPSHOT]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        try:
            line = proc.stderr.readline()
            m = re.match(r"gpudoctor serve: listening on (http://127\.0\.0\.1:\d+)$", line.strip())
            if not m:
                failures.append(f"serve with the unit's flags did not start: {line!r} "
                                f"{proc.stderr.read() if proc.poll() is not None else ''}")
                return
            with urllib.request.urlopen(m.group(1) + "/healthz", timeout=10) as r:
                if r.status != 200:
                    failures.append(f"/healthz answered {r.status}")
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=20)
            if rc != 0:
                failures.append(f"serve exited {rc} on SIGTERM (Restart=on-failure would "
                                "restart a clean stop)")
        except Exception as e:  # noqa: BLE001  (any failure is the test's answer)
            failures.append(f"serve with the unit's flags: {e}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def systemd_analyze(gd, failures):
    tool = shutil.which("systemd-analyze")
    if tool is None:
        print("skip: no systemd-analyze")
        return
    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, "gpudoctor.service")
        with open(UNIT) as f:
            text = f.read().replace("/usr/local/bin/gpudoctor", gd)
        with open(unit, "w") as f:
            f.write(text)
        v = subprocess.run([tool, "verify", unit], capture_output=True, text=True, timeout=60)
        if v.returncode != 0 or v.stderr.strip() or v.stdout.strip():
            failures.append(f"systemd-analyze verify (exit {v.returncode}):\n{v.stdout}{v.stderr}")
        s = subprocess.run([tool, "security", "--offline=yes", unit], capture_output=True,
                           text=True, timeout=60)
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", s.stdout)
        if not m:
            failures.append(f"systemd-analyze security --offline=yes gave no rating:\n"
                            f"{s.stdout[-2000:]}{s.stderr}")
        elif float(m.group(1)) > MAX_EXPOSURE:
            failures.append(f"exposure {m.group(1)} > {MAX_EXPOSURE}:\n{s.stdout}")
        else:
            print(f"systemd-analyze security: exposure {m.group(1)}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    gd = os.path.abspath(sys.argv[1])
    failures = []
    values = check_directives(parse_unit(UNIT), failures)
    args = exec_start(values, failures)
    if args is not None:
        flags = check_flags(gd, args, values, failures)
        run_daemon(gd, flags, failures)
    systemd_analyze(gd, failures)
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    print(f"systemd unit: {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
