#!/usr/bin/env python3
"""The helpers of scripts/device-busy.sh (a running job measured while
gpudoctor runs beside it; tests/device/README.md "Busy").

  busy_report.py wait-serve --stderr FILE --runs N --timeout S --out DIR [--pid PID]
      Reads the port from `gpudoctor serve`'s stderr line
          gpudoctor serve: listening on http://127.0.0.1:40123
      and scrapes /metrics every half second until gpudoctor_check_runs_total
      is at least N. Keeps every scrape's figures in DIR/serve-scrapes.tsv
      and the last scrape in DIR/serve-metrics.txt. Exit 0 reached, 1 not
      within S seconds, 2 no port (serve did not start) or serve ended.

  busy_report.py sample --dir DIR --stop FILE [--ms 100] [--smi nvidia-smi]
      Until FILE exists: GPU 0's memory.used and the processes on it, from
          nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 -lms MS
          nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits -i 0 -lms MS
      each line stamped with the Unix time it arrived, into DIR/mem.tsv
      (wall, mib) and DIR/apps.tsv (wall, pid, name, mib). One nvidia-smi in
      loop mode per query, not one a sample: a context gpudoctor opened for
      a fraction of a second would show there. An nvidia-smi that ends (no
      loop mode: the tests' stand-in) is started again every MS.

  busy_report.py summarize --dir DIR
      Reads what the script left in DIR (job.jsonl, phases.tsv, steps.tsv,
      mem.tsv, check-json-N.json, snapshot-N.json, serve-scrapes.tsv,
      serve-metrics.txt) and writes DIR/summary.json and DIR/summary.tsv.

Standard library only: it runs under the GPU machine's python3.
"""
import argparse
import csv
import json
import os
import re
import sys
import time
import urllib.request

LISTEN_RE = re.compile(r"gpudoctor serve: listening on (https?://[^\s/]+)")
# A Prometheus sample line, as gpudoctor serve prints them:
#   gpudoctor_verdict{severity="warn"} 1
#   gpudoctor_gpu_healthy{gpu="0",bus_id="0000:01:00.0",uuid="GPU-1b9a..."} 1
#   gpudoctor_check_runs_total 5
SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """[(name, {label: value}, float)] of a /metrics text."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        out.append((m.group(1), dict(LABEL_RE.findall(m.group(2) or "")), value))
    return out


def serve_figures(samples):
    """runs_total, the verdict's severity, {gpu: healthy} of one scrape."""
    runs = None
    verdict = None
    healthy = {}
    for name, labels, value in samples:
        if name == "gpudoctor_check_runs_total":
            runs = int(value)
        elif name == "gpudoctor_verdict" and value == 1:
            verdict = labels.get("severity")
        elif name == "gpudoctor_gpu_healthy":
            healthy[labels.get("gpu", labels.get("bus_id", "?"))] = int(value)
    return runs, verdict, healthy


def alive(pid):
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (serve ended, its parent not yet waited) counts as ended.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_serve(args):
    deadline = time.monotonic() + args.timeout
    os.makedirs(args.out, exist_ok=True)
    url = None
    while url is None:
        try:
            with open(args.stderr, encoding="utf-8", errors="replace") as f:
                m = LISTEN_RE.search(f.read())
            url = m.group(1) if m else None
        except OSError:
            pass
        if url is None:
            if time.monotonic() > deadline or not alive(args.pid):
                print("wait-serve: no 'listening on' line in %s" % args.stderr)
                return 2
            time.sleep(0.1)
    print("wait-serve: %s/metrics" % url)
    tsv = open(os.path.join(args.out, "serve-scrapes.tsv"), "w")
    tsv.write("wall\tcheck_runs_total\tverdict\tgpu_healthy\terror\n")
    runs = None
    while True:
        wall = time.time()
        try:
            with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
                text = r.read().decode("utf-8", "replace")
            with open(os.path.join(args.out, "serve-metrics.txt"), "w") as f:
                f.write(text)
            runs, verdict, healthy = serve_figures(parse_metrics(text))
            tsv.write("%.3f\t%s\t%s\t%s\t\n" % (wall, "" if runs is None else runs, verdict or "",
                                               ",".join("%s=%d" % kv for kv in healthy.items())))
        except Exception as e:  # refused, timed out: recorded, tried again
            tsv.write("%.3f\t\t\t\t%s\n" % (wall, str(e).replace("\t", " ")[:200]))
        tsv.flush()
        if runs is not None and runs >= args.runs:
            print("wait-serve: gpudoctor_check_runs_total %d" % runs)
            return 0
        if time.monotonic() > deadline:
            print("wait-serve: gpudoctor_check_runs_total %s after %g s" % (runs, args.timeout))
            return 1
        if not alive(args.pid):
            print("wait-serve: serve ended")
            return 2
        time.sleep(0.5)


SMI_QUERIES = {
    "mem.tsv": ["--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
    "apps.tsv": ["--query-compute-apps=pid,process_name,used_memory",
                 "--format=csv,noheader,nounits", "-i", "0"],
}


def sample_row(name, wall, line):
    """A tsv row of one nvidia-smi line, or None. The lines:
        mem.tsv   81559
        apps.tsv  4711, /usr/bin/python3, 128102
    """
    parts = [p.strip() for p in line.split(",")]
    if name == "mem.tsv":
        return "%.3f\t%s\n" % (wall, parts[0]) if parts[0].isdigit() else None
    if len(parts) >= 3 and parts[0].isdigit():
        mib = parts[-1] if parts[-1].isdigit() else ""
        return "%.3f\t%s\t%s\t%s\n" % (wall, parts[0], ",".join(parts[1:-1]).replace("\t", " "), mib)
    return None


def sample(args):
    import select
    import signal
    import subprocess

    outs = {}
    for name in SMI_QUERIES:
        outs[name] = open(os.path.join(args.dir, name), "w")
        outs[name].write("wall\tmib\n" if name == "mem.tsv" else "wall\tpid\tname\tmib\n")
        outs[name].flush()
    procs = {}
    restart_at = {name: 0.0 for name in SMI_QUERIES}
    bufs = {}
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    try:
        while not stop[0] and not os.path.exists(args.stop):
            now = time.monotonic()
            for name, query in SMI_QUERIES.items():
                if name not in procs and now >= restart_at[name]:
                    procs[name] = subprocess.Popen(
                        [args.smi] + query + ["-lms", str(args.ms)], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
                    bufs[name] = b""
            fds = {p.stdout.fileno(): name for name, p in procs.items()}
            if not fds:
                time.sleep(0.05)
                continue
            ready = select.select(list(fds), [], [], 0.2)[0]
            wall = time.time()
            for fd in ready:
                name = fds[fd]
                chunk = os.read(fd, 65536)
                if not chunk:  # ended: no loop mode, or it failed; again in a while
                    procs.pop(name).wait()
                    restart_at[name] = time.monotonic() + max(args.ms, 100) / 1000.0
                    continue
                bufs[name] += chunk
                *lines, bufs[name] = bufs[name].split(b"\n")
                for line in lines:
                    row = sample_row(name, wall, line.decode("utf-8", "replace"))
                    if row:
                        outs[name].write(row)
                outs[name].flush()
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    return 0


# ------------------------------------------------------------------- summarize


def read_tsv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f, delimiter="\t"))
    except OSError:
        return []


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def job_lines(path):
    lines = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if isinstance(j, dict):
                    lines.append(j)
    except OSError:
        pass
    return lines


def rate(lines, start, end):
    """Iterations per second between the first and the last line inside
    [start, end] (Unix times); None with fewer than two lines there."""
    inside = [j for j in lines if j.get("wall") is not None and j.get("iters") is not None
              and start <= j["wall"] <= end and j.get("t") is not None]
    if len(inside) < 2 or inside[-1]["wall"] <= inside[0]["wall"]:
        return None, None, len(inside)
    d_iters = inside[-1]["iters"] - inside[0]["iters"]
    d_t = inside[-1]["wall"] - inside[0]["wall"]
    return round(d_iters / d_t, 3), round(d_t, 3), len(inside)


def mem_in(samples, start, end):
    """The samples (MiB) taken within [start, end]."""
    return [v for t, v in samples if start <= t <= end]


def apps_in(apps, start, end, job_pid):
    """{pid: {name, samples, max_mib}} of the processes nvidia-smi listed on
    GPU 0 within [start, end], the job's own apart."""
    seen = {}
    for t, pid, name, mib in apps:
        if start <= t <= end and pid != job_pid:
            a = seen.setdefault(str(pid), {"name": name, "samples": 0, "max_mib": None})
            a["samples"] += 1
            if mib is not None and (a["max_mib"] is None or mib > a["max_mib"]):
                a["max_mib"] = mib
    return seen


def snapshot_view(path, job_pid):
    s = load_json(path)
    if not isinstance(s, dict):
        return {"file": os.path.basename(path), "error": "missing or unreadable"}
    gpus = (s.get("nvml") or {}).get("gpus") or []
    gpu0 = next((g for g in gpus if g.get("index") == 0), gpus[0] if gpus else None)
    bus0 = ((gpu0 or {}).get("pci_bus_id") or {}).get("value")
    nvml_pids = [p.get("pid") for p in (((gpu0 or {}).get("processes") or {}).get("value") or [])]
    runs = []
    skipped_any = {}
    for run in (s.get("cuda") or {}).get("runs") or []:
        dev = next((d for d in run.get("devices") or [] if d.get("pci_bus_id") == bus0), None)
        runs.append({"label": run.get("label"),
                     "gpu0_ordinal": None if dev is None else dev.get("ordinal"),
                     "ctx_rc": None if dev is None else dev.get("ctx_rc"),
                     "ctx_skipped": None if dev is None else dev.get("ctx_skipped")})
        for d in run.get("devices") or []:
            if d.get("ctx_skipped"):
                skipped_any.setdefault(d.get("pci_bus_id"), d["ctx_skipped"])
    work = s.get("workload") or {}
    procs = work.get("processes") or []
    pids = [p.get("pid") for p in procs]
    return {
        "file": os.path.basename(path),
        "gpu0_bus_id": bus0,
        "gpu0_compute_mode": ((gpu0 or {}).get("compute_mode") or {}).get("value"),
        "gpu0_nvml_pids": nvml_pids,
        "cuda_runs": runs,
        # a context asked for on GPU 0 (ctx_rc is -1 only where none was)
        "contexts_asked_on_gpu0": sum(1 for r in runs if r["ctx_rc"] not in (None, -1)),
        "ctx_skipped_by_bus_id": skipped_any,
        "workload_attempted": work.get("attempted"),
        "workload_processes": [{k: p.get(k) for k in ("pid", "comm", "visible", "job_kind",
                                                      "job_id", "job_state")} for p in procs],
        "job_pid_listed": None if job_pid is None else (job_pid in pids or job_pid in nvml_pids),
    }


def check_view(path):
    r = load_json(path)
    if not isinstance(r, dict):
        return {"verdict": None, "problems": [], "error": "missing or unreadable"}
    return {"verdict": r.get("verdict"),
            "problems": [{"id": f.get("id"), "severity": f.get("severity"),
                          "summary": (f.get("summary") or "")[:200]}
                         for f in r.get("findings") or [] if f.get("severity") in ("warn", "fail")]}


def summarize(args):
    d = args.dir
    phases = {r["phase"]: (num(r["start"]), num(r["end"])) for r in read_tsv(os.path.join(d, "phases.tsv"))}
    steps = read_tsv(os.path.join(d, "steps.tsv"))
    lines = job_lines(os.path.join(d, "job.jsonl"))
    setup = next((j for j in lines if j.get("pid") is not None), {})
    job_pid = setup.get("pid")
    errors = [j["error"] for j in lines if j.get("error")]
    job_meta = {}
    for r in read_tsv(os.path.join(d, "job.tsv")):
        job_meta[r["key"]] = r["value"]
    samples = []
    for r in read_tsv(os.path.join(d, "mem.tsv")):
        t, v = num(r.get("wall")), num(r.get("mib"))
        if t is not None and v is not None:
            samples.append((t, v))
    apps = []
    for r in read_tsv(os.path.join(d, "apps.tsv")):
        t, pid = num(r.get("wall")), num(r.get("pid"))
        if t is not None and pid is not None:
            apps.append((t, int(pid), r.get("name"), num(r.get("mib"))))

    def window(name):
        return phases.get(name, (None, None))

    out = {"schema": "gpudoctor.device-busy/v1", "dir": os.path.abspath(d)}
    out["job"] = {
        "cmd": job_meta.get("cmd"),
        "exit": None if job_meta.get("exit") in (None, "") else int(job_meta["exit"]),
        "ready": job_meta.get("ready") == "1",
        "pid": job_pid,
        "setup": {k: v for k, v in setup.items() if k not in ("t", "wall", "iters", "error")},
        "lines": len(lines),
        "iters": max([j.get("iters") or 0 for j in lines], default=0),
        "errors": errors,
        "skipped": job_meta.get("skipped") or None,
    }
    a0, a1 = window("alone")
    b0, b1 = window("during")
    alone = rate(lines, a0, a1) if a0 is not None else (None, None, 0)
    during = rate(lines, b0, b1) if b0 is not None else (None, None, 0)
    out["alone"] = {"start": a0, "end": a1, "iters_per_s": alone[0], "measured_s": alone[1],
                    "job_lines": alone[2]}
    out["during"] = {"start": b0, "end": b1, "iters_per_s": during[0], "measured_s": during[1],
                     "job_lines": during[2]}
    out["ratio"] = (round(during[0] / alone[0], 4) if alone[0] and during[0] is not None else None)

    idle_w = window("idle")
    mem = {"source": job_meta.get("mem_source"), "samples": len(samples)}
    for name, (s0, s1) in (("idle", idle_w), ("alone", (a0, a1)), ("during", (b0, b1))):
        vals = mem_in(samples, s0, s1) if s0 is not None else []
        mem[name + "_samples"] = len(vals)
        mem[name + "_max_mib"] = max(vals) if vals else None
    mem["job_held_mib"] = (mem["alone_max_mib"] - mem["idle_max_mib"]
                           if mem["alone_max_mib"] is not None and mem["idle_max_mib"] is not None
                           else None)
    mem["max_extra_mib"] = (mem["during_max_mib"] - mem["alone_max_mib"]
                            if mem["during_max_mib"] is not None and mem["alone_max_mib"] is not None
                            else None)
    out["memory"] = mem
    # Processes on GPU 0 besides the job while gpudoctor ran: a context that
    # gpudoctor (or anyone) opened there, however briefly nvidia-smi saw it.
    others = apps_in(apps, b0, b1, job_pid) if b0 is not None else {}
    out["other_processes_alone"] = apps_in(apps, a0, a1, job_pid) if a0 is not None else {}
    out["other_processes_during"] = others
    out["gpudoctor_processes_during"] = {p: a for p, a in others.items()
                                         if "gpudoctor" in (a["name"] or "")}

    step_rows = []
    for r in steps:
        s0, s1 = num(r.get("start")), num(r.get("end"))
        row = {"name": r["step"], "exit": r["exit"], "seconds": num(r["seconds"]),
               "command": r.get("command")}
        if s0 is not None and s1 is not None:
            vals = mem_in(samples, s0, s1)
            row["max_mib"] = max(vals) if vals else None
            row["max_extra_mib"] = (max(vals) - mem["alone_max_mib"]
                                    if vals and mem["alone_max_mib"] is not None else None)
            row["iters_per_s"] = rate(lines, s0, s1)[0]
            row["other_pids"] = sorted(apps_in(apps, s0, s1, job_pid))
        step_rows.append(row)
    out["steps"] = step_rows
    by_name = {r["name"]: r for r in step_rows}

    checks = []
    for r in step_rows:
        if r["name"].startswith("check-json-"):
            v = check_view(os.path.join(d, r["name"] + ".json"))
            v.update(name=r["name"], exit=r["exit"])
            checks.append(v)
    out["checks"] = checks
    slurm = by_name.get("check-slurm")
    out["slurm"] = {"exit": slurm["exit"] if slurm else None,
                    "skipped": job_meta.get("slurm_skipped") or None}
    if slurm:
        try:
            with open(os.path.join(d, "check-slurm.txt"), errors="replace") as f:
                out["slurm"]["output"] = f.read()[:2000]
        except OSError:
            pass

    scrapes = read_tsv(os.path.join(d, "serve-scrapes.tsv"))
    last = None
    try:
        with open(os.path.join(d, "serve-metrics.txt")) as f:
            last = serve_figures(parse_metrics(f.read()))
    except OSError:
        pass
    unhealthy_seen = sorted({kv.split("=")[0] for s in scrapes for kv in s["gpu_healthy"].split(",")
                             if kv.endswith("=0")})
    out["serve"] = {
        "exit": by_name["serve"]["exit"] if "serve" in by_name else None,
        "wait_exit": by_name["serve-wait"]["exit"] if "serve-wait" in by_name else None,
        "scrapes": len(scrapes),
        "check_runs_total": last[0] if last else None,
        "verdict": last[1] if last else None,
        "gpu_healthy": last[2] if last else {},
        "verdicts_seen": sorted({s["verdict"] for s in scrapes if s["verdict"]}),
        "gpus_unhealthy_seen": unhealthy_seen,
    }

    snaps = [snapshot_view(os.path.join(d, r["name"] + ".json"), job_pid)
             for r in step_rows if r["name"].startswith("snapshot-")]
    out["snapshots"] = snaps
    reasons = sorted({run["ctx_skipped"] for s in snaps for run in s.get("cuda_runs", [])
                      if run.get("ctx_skipped")})
    out["ctx_skipped_gpu0"] = reasons
    out["contexts_asked_on_gpu0"] = sum(s.get("contexts_asked_on_gpu0", 0) for s in snaps)
    out["verdicts"] = {c["name"]: c["verdict"] for c in checks}
    if out["serve"]["verdict"] is not None:
        out["verdicts"]["serve"] = out["serve"]["verdict"]
    out["elapsed_s"] = num(job_meta.get("elapsed_s"))
    out["budget_s"] = num(job_meta.get("budget_s"))

    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    flat = [
        ("iters_per_s_alone", out["alone"]["iters_per_s"]),
        ("iters_per_s_during", out["during"]["iters_per_s"]),
        ("ratio_during_alone", out["ratio"]),
        ("job_exit", out["job"]["exit"]),
        ("job_errors", " | ".join(errors)),
        ("job_device", out["job"]["setup"].get("device")),
        ("job_held_mib", mem["job_held_mib"]),
        ("gpu_mem_max_alone_mib", mem["alone_max_mib"]),
        ("gpu_mem_max_during_mib", mem["during_max_mib"]),
        ("gpu_mem_max_extra_mib", mem["max_extra_mib"]),
        ("other_processes_during", ", ".join("%s %s (%s MiB)" % (p, a["name"], a["max_mib"])
                                             for p, a in sorted(others.items()))),
        ("ctx_skipped_gpu0", " | ".join(reasons)),
        ("contexts_asked_on_gpu0", out["contexts_asked_on_gpu0"]),
        ("job_pid_listed", ",".join(str(s.get("job_pid_listed")) for s in snaps)),
    ]
    for c in checks:
        flat.append(("verdict:" + c["name"], "%s (exit %s; %s)" % (
            c["verdict"], c["exit"], ", ".join(p["id"] for p in c["problems"]) or "no warn/fail")))
    flat.append(("slurm", out["slurm"]["skipped"] or "exit %s" % out["slurm"]["exit"]))
    flat.append(("serve", "exit %s; %s runs; verdict %s; gpu_healthy %s; unhealthy seen: %s" % (
        out["serve"]["exit"], out["serve"]["check_runs_total"], out["serve"]["verdict"],
        ",".join("%s=%s" % kv for kv in out["serve"]["gpu_healthy"].items()),
        ",".join(unhealthy_seen) or "none")))
    for r in step_rows:
        flat.append(("step:" + r["name"], "exit %s; %ss; max extra %s MiB; %s iters/s" % (
            r["exit"], r["seconds"], r.get("max_extra_mib"), r.get("iters_per_s"))))
    with open(os.path.join(d, "summary.tsv"), "w") as f:
        f.write("field\tvalue\n")
        for k, v in flat:
            f.write("%s\t%s\n" % (k, "" if v is None else str(v).replace("\t", " ").replace("\n", " ")))
    for k, v in flat:
        print("%-26s %s" % (k, "" if v is None else v))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait-serve")
    w.add_argument("--stderr", required=True)
    w.add_argument("--runs", type=int, default=20)
    w.add_argument("--timeout", type=float, default=60)
    w.add_argument("--out", required=True)
    w.add_argument("--pid", type=int, default=None)
    p = sub.add_parser("sample")
    p.add_argument("--dir", required=True)
    p.add_argument("--stop", required=True)
    p.add_argument("--ms", type=int, default=100)
    p.add_argument("--smi", default="nvidia-smi")
    s = sub.add_parser("summarize")
    s.add_argument("--dir", required=True)
    args = ap.parse_args()
    return {"wait-serve": wait_serve, "sample": sample, "summarize": summarize}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
