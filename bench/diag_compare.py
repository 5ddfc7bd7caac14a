#!/usr/bin/env python3
"""bench/diag_gpu.sh's judge and timer.

compare (the default): gpudoctor's figures against PyTorch's, the planted
faults, the timings, in one table each.

  diag_compare.py [--diag REPORT] [--torch TORCH_JSON] [--fault gemm=REPORT]
                  [--fault memory=REPORT] [--timing TIMING_JSON]
                  [--machine TEXT] [--skip NAME=REASON ...] [--json FILE]
                  [--save FILE]

  REPORT is `gpudoctor diag --json`'s gpudoctor.report/v1 document:
    {"findings": [{"id": "compute.mismatch", "severity": "fail", ...}, ...],
     "diag": {"run": {"gemms": [{"bus_id": ..., "dtype": "bf16", "flops_per_s": ...,
                                 "mismatches": ...}],
                      "copies": [{"bus_id": ..., "direction": "h2d", "bytes_per_s": ...}],
                      "memtests": [{"errors": 1, "failures": [{"address": ..., ...}]}]},
              "figures": [{"bus_id": "0000:17:00.0", "metric": "gemm.bf16",
                           "value": 7.1e14, "unit": "FLOP/s", "expected": 5.9e14,
                           "judgement": "ok", ...}]}}
  (figures first; run.gemms / run.copies when a metric has no figure).
  TORCH_JSON is bench/diag_torch.py's output; TIMING_JSON this script's
  `timing` output. --skip says why an input is missing (NAME: diag, torch,
  fault-gemm, fault-memory, timing); it is printed in its place.

  Goals (issue 6): each GEMM at least 0.95x PyTorch's, each copy at least
  0.90x. A goal not met and a fault not caught are reported, never hidden:
  exit 0 whenever the inputs could be read. Exit 2 (one line on stderr) on
  malformed input: not JSON, or not the shape above. Exit 64 on usage.

  --save FILE writes the whole summary (machine lines, the comparison, the
  faults, the timings) for bench/diag_gpu.txt; --json FILE the rows as JSON.

timing: median wall time of each command as a whole process, against
`gpudoctor check`:

  diag_compare.py timing [--gpudoctor PATH] [--gd-ld DIRS] [--python PY]
                  [--no-torch REASON] [--smi nvidia-smi] [--runs 10]
                  [--slow-runs 3] [--timeout-s 60] [--out JSON] [--text TXT]

  Rows: `gpudoctor check` (the baseline; LD_LIBRARY_PATH=DIRS added for it
  alone), `nvidia-smi -q`, `python3 -c "import torch"`, and
  `python3 -c "import torch; torch.cuda.is_available()"` without and with
  PYTORCH_NVML_BASED_CUDA_CHECK=1. Each command runs once untimed (page
  cache), then --runs times (--slow-runs for the PyTorch ones); time is
  time.perf_counter() around subprocess.run, output to a pipe.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

GEMM_GOAL = 0.95
COPY_GOAL = 0.90
METRICS = ("gemm.bf16", "gemm.fp16", "gemm.tf32", "gemm.fp32", "memory.bandwidth", "pcie.h2d",
           "pcie.d2h")
COPY_METRIC = {"h2d": "pcie.h2d", "d2h": "pcie.d2h", "d2d": "memory.bandwidth"}
SKIP_NAMES = ("diag", "torch", "fault-gemm", "fault-memory", "timing")
FAULTS = {"gemm": "compute.mismatch", "memory": "memory.test-failed"}


class Malformed(Exception):
    """Input that is not what the producer writes: one printable line."""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


# ------------------------------------------------------------------ reading

def load_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise Malformed("%s: %s" % (path, e.strerror or e))
    try:
        return json.loads(text)
    except ValueError as e:
        raise Malformed("%s: not JSON (%s)" % (path, str(e).splitlines()[0]))


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _obj(v, path, what):
    if not isinstance(v, dict):
        raise Malformed("%s: %s is not an object" % (path, what))
    return v


def _list(v, path, what):
    if v is None:
        return []
    if not isinstance(v, list):
        raise Malformed("%s: %s is not a list" % (path, what))
    return v


def diag_section(report, path):
    """(run, figures) of a gpudoctor diag report."""
    _obj(report, path, "the report")
    diag = _obj(report.get("diag"), path, '"diag"')
    run = diag.get("run")
    run = {} if run is None else _obj(run, path, '"diag.run"')
    figures = _list(diag.get("figures"), path, '"diag.figures"')
    for i, f in enumerate(figures):
        _obj(f, path, "diag.figures[%d]" % i)
        if not isinstance(f.get("metric"), str) or not _number(f.get("value")):
            raise Malformed('%s: diag.figures[%d] has no string "metric" and number "value"' %
                            (path, i))
    return run, figures


def diag_values(report, path):
    """{metric: [{"bus_id", "value", "unit", "expected", "judgement"}]} of a
    report: its figures, then run.gemms / run.copies for metrics without one."""
    run, figures = diag_section(report, path)
    out = {}
    for f in figures:
        out.setdefault(f["metric"], []).append({
            "bus_id": f.get("bus_id") or f.get("gpu") or "", "value": float(f["value"]),
            "unit": f.get("unit", ""), "expected": f.get("expected") or 0,
            "judgement": f.get("judgement", "")})
    fallback = {}
    for i, g in enumerate(_list(run.get("gemms"), path, "diag.run.gemms")):
        _obj(g, path, "diag.run.gemms[%d]" % i)
        if isinstance(g.get("dtype"), str) and _number(g.get("flops_per_s")) and \
                g.get("status", "pass") in ("pass", "fail"):
            fallback.setdefault("gemm." + g["dtype"], []).append({
                "bus_id": g.get("bus_id") or g.get("gpu") or "",
                "value": float(g["flops_per_s"]), "unit": "FLOP/s", "expected": 0,
                "judgement": ""})
    for i, c in enumerate(_list(run.get("copies"), path, "diag.run.copies")):
        _obj(c, path, "diag.run.copies[%d]" % i)
        metric = COPY_METRIC.get(c.get("direction"))
        if metric and _number(c.get("bytes_per_s")) and c.get("status", "pass") in ("pass", "fail"):
            fallback.setdefault(metric, []).append({
                "bus_id": c.get("bus_id") or c.get("gpu") or "",
                "value": float(c["bytes_per_s"]), "unit": "bytes/s", "expected": 0,
                "judgement": ""})
    for metric, rows in fallback.items():
        if metric not in out:
            # Sustained copies come after level 1's 64 MiB ones: the last per GPU.
            last = {}
            for r in rows:
                last[r["bus_id"]] = r
            out[metric] = list(last.values())
    return out


def torch_values(doc, path):
    """(available, why, device dict, {metric: value}) of diag_torch.py's output."""
    _obj(doc, path, "the document")
    if doc.get("schema") != "gpudoctor.bench-torch/v1":
        raise Malformed('%s: schema is not "gpudoctor.bench-torch/v1"' % path)
    if doc.get("available") is not True:
        return False, str(doc.get("error") or "not available"), {}, {}
    values = {}
    for i, m in enumerate(_list(doc.get("metrics"), path, '"metrics"')):
        _obj(m, path, "metrics[%d]" % i)
        if not isinstance(m.get("metric"), str) or not (m.get("value") is None or
                                                        _number(m.get("value"))):
            raise Malformed('%s: metrics[%d] has no string "metric" and number "value"' %
                            (path, i))
        if m["value"] is not None:
            values[m["metric"]] = float(m["value"])
    device = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    return True, "", device, values


def findings_of(report, path):
    _obj(report, path, "the report")
    findings = _list(report.get("findings"), path, '"findings"')
    for i, f in enumerate(findings):
        _obj(f, path, "findings[%d]" % i)
        if not isinstance(f.get("id"), str) or not isinstance(f.get("severity"), str):
            raise Malformed('%s: findings[%d] has no string "id" and "severity"' % (path, i))
    return findings


# ------------------------------------------------------------------ judging

def goal_for(metric):
    return GEMM_GOAL if metric.startswith("gemm.") else COPY_GOAL


def compare_rows(gd, torch, torch_bus=""):
    """One row per metric: gpudoctor's value (the torch device's GPU when the
    report has it, else the first GPU), PyTorch's, ratio, goal, met."""
    rows = []
    for metric in METRICS + tuple(sorted(m for m in set(gd) | set(torch) if m not in METRICS)):
        if metric not in gd and metric not in torch:
            continue
        if not (metric.startswith("gemm.") or metric in COPY_METRIC.values()):
            continue
        cands = gd.get(metric, [])
        pick = next((c for c in cands if torch_bus and c["bus_id"] == torch_bus),
                    cands[0] if cands else None)
        ours = pick["value"] if pick else None
        theirs = torch.get(metric)
        ratio = ours / theirs if ours is not None and theirs else None
        goal = goal_for(metric)
        rows.append({"metric": metric, "unit": "FLOP/s" if metric.startswith("gemm.") else
                     "bytes/s", "gpudoctor": ours, "pytorch": theirs, "ratio": ratio,
                     "goal": goal, "met": None if ratio is None else ratio >= goal,
                     "bus_id": pick["bus_id"] if pick else "",
                     "expected": pick["expected"] if pick else 0,
                     "judgement": pick["judgement"] if pick else ""})
    return rows


def judge_fault(kind, report, path):
    """{"kind", "finding", "caught": bool, "detail"}: gemm must give
    compute.mismatch at fail; memory, memory.test-failed at fail with exactly
    one failing address."""
    fid = FAULTS[kind]
    findings = findings_of(report, path)
    run, _ = diag_section(report, path)
    hits = [f for f in findings if f["id"] == fid]
    sev = sorted({f["severity"] for f in hits})
    failing = [f["id"] for f in findings if f["severity"] == "fail"]
    if not hits:
        detail = "%s not reported (failing findings: %s)" % (fid, ", ".join(failing) or "none")
        return {"kind": kind, "finding": fid, "caught": False, "detail": detail}
    if "fail" not in sev:
        return {"kind": kind, "finding": fid, "caught": False,
                "detail": "%s at %s, not at fail" % (fid, "/".join(sev))}
    if kind == "gemm":
        mism = sum(g.get("mismatches", 0) for g in _list(run.get("gemms"), path, "diag.run.gemms")
                   if isinstance(g, dict) and _number(g.get("mismatches")))
        return {"kind": kind, "finding": fid, "caught": True,
                "detail": "%s at fail; %d mismatching element(s) in the gemm results" %
                          (fid, mism)}
    addresses, errors, patterns = set(), 0, set()
    for i, t in enumerate(_list(run.get("memtests"), path, "diag.run.memtests")):
        _obj(t, path, "diag.run.memtests[%d]" % i)
        errors += t.get("errors", 0) if _number(t.get("errors")) else 0
        for fl in _list(t.get("failures"), path, "diag.run.memtests[%d].failures" % i):
            if isinstance(fl, dict):
                addresses.add((t.get("bus_id") or t.get("gpu") or "",
                               fl.get("address", fl.get("offset"))))
                if isinstance(fl.get("pattern"), str):
                    patterns.add(fl["pattern"])
    shown = ", ".join("0x%x" % a if isinstance(a, int) else str(a)
                      for _, a in sorted(addresses, key=str))
    if len(addresses) != 1:
        return {"kind": kind, "finding": fid, "caught": False,
                "detail": "%s at fail but %d failing address(es) (%s), planted 1" %
                          (fid, len(addresses), shown or "none listed")}
    return {"kind": kind, "finding": fid, "caught": True,
            "detail": "%s at fail; 1 failing address %s (pattern %s; %d failing word read(s))" %
                      (fid, shown, "/".join(sorted(patterns)) or "?", errors)}


# ------------------------------------------------------------------ rendering

def human(value, unit):
    if value is None:
        return "n/a"
    if unit == "FLOP/s":
        return "%.1f TFLOP/s" % (value / 1e12)
    if unit == "bytes/s":
        return "%.1f GB/s" % (value / 1e9)
    return "%.3g %s" % (value, unit)


def render_compare(rows, header, notes):
    lines = [header]
    lines.append("%-17s %15s %15s %7s %7s  %s" % ("metric", "gpudoctor", "PyTorch", "ratio",
                                                  "goal", "met?"))
    for r in rows:
        lines.append("%-17s %15s %15s %7s %7s  %s" % (
            r["metric"], human(r["gpudoctor"], r["unit"]), human(r["pytorch"], r["unit"]),
            "n/a" if r["ratio"] is None else "%.3f" % r["ratio"], ">=%.2f" % r["goal"],
            "n/a" if r["met"] is None else ("yes" if r["met"] else "NO")))
    judged = [r for r in rows if r["met"] is not None]
    lines.append("goals met: %d of %d compared%s" % (
        sum(1 for r in judged if r["met"]), len(judged),
        "" if len(judged) == len(rows) else "; %d not compared" % (len(rows) - len(judged))))
    exp = [r for r in rows if r["gpudoctor"] is not None and r["expected"]]
    if exp:
        lines.append("gpudoctor's own figures against its expected floor (catalog):")
        for r in exp:
            lines.append("  %-17s %15s  expected >= %s  %s" % (
                r["metric"], human(r["gpudoctor"], r["unit"]), human(r["expected"], r["unit"]),
                r["judgement"]))
    lines += ["note: " + n for n in notes]
    return lines


def render_faults(faults, skips):
    lines = ["planted faults (gpudoctor diag --plant-fault):"]
    for kind in ("gemm", "memory"):
        f = faults.get(kind)
        if f:
            lines.append("  %-7s %-11s %s" % (kind, "caught" if f["caught"] else "NOT caught",
                                              f["detail"]))
        else:
            lines.append("  %-7s %-11s %s" % (kind, "not run", skips.get("fault-" + kind, "")))
    return lines


def render_timing(doc):
    rows = doc.get("rows", []) if isinstance(doc, dict) else []
    lines = ["start-up, whole process, median wall time (against gpudoctor check):"]
    lines.append("  %-62s %5s %10s %9s" % ("command", "runs", "median ms", "x check"))
    for r in rows:
        if r.get("skipped"):
            lines.append("  %-62s %s" % (r["name"], "skipped: " + r["skipped"]))
            continue
        med = r.get("median_ms")
        ratio = r.get("ratio_vs_check")
        extra = ""
        if r.get("exit_codes") and any(c != 0 for c in r["exit_codes"]):
            extra += "  exit %s" % ",".join(str(c) for c in sorted(set(r["exit_codes"])))
        if r.get("stdout_last"):
            extra += "  -> %s" % r["stdout_last"]
        if r.get("timed_out"):
            extra += "  (timed out)"
        lines.append("  %-62s %5d %10s %9s%s" % (
            r["name"], len(r.get("wall_ms", [])), "n/a" if med is None else "%.1f" % med,
            "n/a" if ratio is None else "%.2fx" % ratio, extra))
    return lines


# ------------------------------------------------------------------ compare main

def parse_pairs(items, allowed, what):
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or name not in allowed or not value:
            raise UsageError("%s: expected NAME=VALUE with NAME one of %s, got %r" %
                             (what, ",".join(allowed), item))
        out[name] = value
    return out


def compare_main(argv):
    p = _Parser(prog="diag_compare.py")
    p.add_argument("--diag")
    p.add_argument("--torch")
    p.add_argument("--fault", action="append")
    p.add_argument("--timing")
    p.add_argument("--machine")
    p.add_argument("--skip", action="append")
    p.add_argument("--json")
    p.add_argument("--save")
    a = p.parse_args(argv)
    faults_in = parse_pairs(a.fault, tuple(FAULTS), "--fault")
    skips = parse_pairs(a.skip, SKIP_NAMES, "--skip")

    notes = []
    gd = {}
    diag_report = None
    if a.diag:
        diag_report = load_json(a.diag)
        gd = diag_values(diag_report, a.diag)
        run = diag_report["diag"].get("run") or {}
        if run.get("incomplete"):
            notes.append("gpudoctor diag incomplete: %s" % run["incomplete"])
        if not gd:
            notes.append("gpudoctor diag reported no GEMM or copy figure")
    else:
        notes.append("gpudoctor diag not run: %s" % skips.get("diag", "no report given"))
    tvals, tdev, torch_label = {}, {}, "PyTorch"
    if a.torch:
        tdoc = load_json(a.torch)
        ok, why, tdev, tvals = torch_values(tdoc, a.torch)
        if ok:
            torch_label = "PyTorch %s" % tdoc.get("torch", "?")
        else:
            notes.append("PyTorch side skipped: %s" % why)
    else:
        notes.append("PyTorch side skipped: %s" % skips.get("torch", "no result given"))
    faults = {}
    for kind, path in faults_in.items():
        faults[kind] = judge_fault(kind, load_json(path), path)
    timing = None
    if a.timing:
        timing = _obj(load_json(a.timing), a.timing, "the timing document")
        _list(timing.get("rows"), a.timing, '"rows"')

    rows = compare_rows(gd, tvals, tdev.get("bus_id", ""))
    multi = [m for m, v in gd.items() if len({c["bus_id"] for c in v}) > 1]
    if multi:
        notes.append("gpudoctor measured several GPUs; compared: %s" %
                     (tdev.get("bus_id") or "the first listed"))
    where = tdev.get("name", "")
    if tdev.get("bus_id"):
        where += " (%s)" % tdev["bus_id"]
    header = "gpudoctor diag --level 2 against %s%s" % (torch_label,
                                                      " on " + where if where else "")
    lines = render_compare(rows, header, notes)
    print("\n".join(lines))
    fault_lines = render_faults(faults, skips)
    print("\n".join(fault_lines))
    timing_lines = render_timing(timing) if timing is not None else [
        "timing: not run: %s" % skips.get("timing", "no timing given")]
    print("\n".join(timing_lines))

    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "faults": faults, "notes": notes,
                       "goals": {"gemm": GEMM_GOAL, "copy": COPY_GOAL}}, f, indent=1)
            f.write("\n")
    if a.save:
        machine = []
        if a.machine and os.path.exists(a.machine):
            with open(a.machine) as f:
                machine = [line.rstrip("\n") for line in f]
        with open(a.save, "w") as f:
            f.write("# bench/diag_gpu.sh: gpudoctor diag --level 2 against PyTorch, planted "
                    "faults, start-up timings\n")
            for block in (machine, lines, fault_lines, timing_lines):
                if block:
                    f.write("\n".join(block) + "\n\n")
    return 0


# ------------------------------------------------------------------ timing

def time_runs(argv, env, runs, timeout_s):
    """(wall ms list, exit codes, last stdout line, timed out). One untimed
    run first; a run over timeout_s ends the row."""
    walls, codes, last = [], [], ""
    for i in range(runs + 1):
        t0 = time.perf_counter()
        try:
            p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return walls, codes, last, True
        ms = (time.perf_counter() - t0) * 1000
        if i == 0:
            continue
        walls.append(ms)
        codes.append(p.returncode)
        out = p.stdout.decode(errors="replace").strip().splitlines()
        last = out[-1][:40] if out else ""
    return walls, codes, last, False


def which(name):
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = os.path.join(d or ".", name)
        if os.access(cand, os.X_OK) and not os.path.isdir(cand):
            return cand
    return None


def timing_main(argv):
    p = _Parser(prog="diag_compare.py timing")
    p.add_argument("--gpudoctor")
    p.add_argument("--gd-ld", default="")
    p.add_argument("--gd-missing", default="no gpudoctor given")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--no-torch")
    p.add_argument("--smi", default="nvidia-smi")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--slow-runs", type=int, default=3)
    p.add_argument("--timeout-s", type=float, default=60)
    p.add_argument("--out")
    p.add_argument("--text")
    a = p.parse_args(argv)
    if a.runs < 1 or a.slow_runs < 1:
        raise UsageError("--runs and --slow-runs must be at least 1")

    base = {k: v for k, v in os.environ.items() if k != "PYTORCH_NVML_BASED_CUDA_CHECK"}
    rows = []

    def row(name, argv_, env, runs, skipped=None):
        r = {"name": name, "argv": argv_}
        if skipped:
            r["skipped"] = skipped
        else:
            walls, codes, last, timed_out = time_runs(argv_, env, runs, a.timeout_s)
            r.update({"wall_ms": [round(w, 3) for w in walls], "exit_codes": codes,
                      "median_ms": statistics.median(walls) if walls else None,
                      "min_ms": min(walls) if walls else None,
                      "max_ms": max(walls) if walls else None, "timed_out": timed_out})
            if last:
                r["stdout_last"] = last
        rows.append(r)
        return r

    gd_env = dict(base)
    if a.gd_ld:
        gd_env["LD_LIBRARY_PATH"] = a.gd_ld + (":" + base["LD_LIBRARY_PATH"]
                                                if base.get("LD_LIBRARY_PATH") else "")
    gd_ok = a.gpudoctor and os.access(a.gpudoctor, os.X_OK)
    check = row("gpudoctor check", [a.gpudoctor or "gpudoctor", "check"], gd_env, a.runs,
                None if gd_ok else a.gd_missing)
    smi = which(a.smi)
    row("nvidia-smi -q", [smi or a.smi, "-q"], base, a.runs,
        None if smi else "no %s on this machine" % a.smi)
    no_torch = a.no_torch
    row('python3 -c "import torch"', [a.python, "-c", "import torch"], base, a.slow_runs,
        no_torch)
    probe = "import torch; print(torch.cuda.is_available())"
    row('python3 -c "import torch; torch.cuda.is_available()"', [a.python, "-c", probe], base,
        a.slow_runs, no_torch)
    row('  same, PYTORCH_NVML_BASED_CUDA_CHECK=1', [a.python, "-c", probe],
        dict(base, PYTORCH_NVML_BASED_CUDA_CHECK="1"), a.slow_runs, no_torch)
    ref = check.get("median_ms")
    for r in rows:
        m = r.get("median_ms")
        r["ratio_vs_check"] = m / ref if m is not None and ref else None

    doc = {"schema": "gpudoctor.bench-timing/v1", "runs": a.runs, "slow_runs": a.slow_runs,
           "baseline": "gpudoctor check", "rows": rows}
    text = "\n".join(render_timing(doc))
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if a.text:
        with open(a.text, "w") as f:
            f.write(text + "\n")
    return 0


def main(argv):
    try:
        if argv and argv[0] == "timing":
            return timing_main(argv[1:])
        return compare_main(argv)
    except UsageError as e:
        print("diag_compare.py: %s" % e, file=sys.stderr)
        return 64
    except Malformed as e:
        print("diag_compare.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
