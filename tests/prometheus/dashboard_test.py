#!/usr/bin/env python3
"""The Grafana dashboard and the alert rules only use metrics gpudoctor
emits: every `gpudoctor_*` name in a PromQL expression of
deploy/grafana/gpudoctor-dashboard.json (panels and template variables) and
deploy/prometheus/gpudoctor-rules.yml must be a metric documented in
docs/metrics.md (whose list a unit test holds equal to what render_metrics
can emit). Also: the dashboard parses, its panels and variables use the
templated data source, and it has the job/node/gpu variables.

usage: dashboard_test.py
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DASHBOARD = os.path.join(SRC, "deploy", "grafana", "gpudoctor-dashboard.json")
RULES = os.path.join(SRC, "deploy", "prometheus", "gpudoctor-rules.yml")
DOCS = os.path.join(SRC, "docs", "metrics.md")

# A metric name in PromQL: gpudoctor_ and more name characters, not inside a
# longer identifier. Label values such as job="gpudoctor" do not match
# (no underscore after the prefix).
METRIC = re.compile(r"(?<![A-Za-z0-9_:])gpudoctor_[A-Za-z0-9_:]*")


def documented():
    with open(DOCS, encoding="utf-8") as f:
        return set(re.findall(r"^\| `(gpudoctor_[a-z0-9_]+)`", f.read(), re.M))


def dashboard_exprs(dash):
    """(where, expr) for every PromQL expression in the dashboard."""
    out = []

    def walk_panels(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((f"panel {p.get('title')!r}", t.get("expr", "")))
            walk_panels(p.get("panels", []))

    walk_panels(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            out.append((f"variable {v['name']}", q.get("query", "") if isinstance(q, dict) else q))
    return out


def rule_exprs():
    """(where, expr) for every rule: the expr lines of the rules file, folded
    `>-` blocks included (no YAML parser needed for the file's own layout)."""
    out = []
    with open(RULES, encoding="utf-8") as f:
        lines = f.read().splitlines()
    name = None
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("- alert:") or line.startswith("- record:"):
            name = line.split(":", 1)[1].strip()
        if line.startswith("expr:"):
            expr = line[len("expr:"):].strip()
            if expr in (">-", ">", "|", "|-"):
                indent = len(lines[i + 1]) - len(lines[i + 1].lstrip())
                parts = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) >= indent):
                    parts.append(lines[i].strip())
                    i += 1
                expr = " ".join(parts)
                out.append((f"rule {name}", expr))
                continue
            out.append((f"rule {name}", expr))
        i += 1
    return out


def main():
    failures = []
    known = documented()
    if len(known) < 40:
        failures.append(f"docs/metrics.md lists only {len(known)} metrics; the table parse broke")
    with open(DASHBOARD, encoding="utf-8") as f:
        try:
            dash = json.load(f)
        except json.JSONDecodeError as e:
            sys.exit(f"FAIL: {DASHBOARD} is not JSON: {e}")

    exprs = dashboard_exprs(dash)
    rules = rule_exprs()
    if len(rules) < 15:
        failures.append(f"found only {len(rules)} rule expressions in {RULES}")
    used = set()
    for where, expr in exprs + rules:
        if not expr.strip():
            failures.append(f"{where}: empty expression")
        for name in METRIC.findall(expr):
            used.add(name)
            if name not in known:
                failures.append(f"{where}: {name} is not a metric in docs/metrics.md: {expr}")

    # The templated data source everywhere, and the variables the rows use.
    names = {v.get("name") for v in dash.get("templating", {}).get("list", [])}
    for want in ("datasource", "job", "node", "gpu"):
        if want not in names:
            failures.append(f"dashboard has no ${want} variable")
    ds_vars = [v for v in dash["templating"]["list"] if v.get("type") == "datasource"]
    if not ds_vars or ds_vars[0].get("query") != "prometheus":
        failures.append("the datasource variable must be of type prometheus")
    ids = []

    def check_panels(panels):
        for p in panels:
            ids.append(p.get("id"))
            if p.get("type") != "row":
                ds = p.get("datasource", {})
                if ds.get("uid") != "${datasource}":
                    failures.append(f"panel {p.get('title')!r} does not use ${{datasource}}")
                if not p.get("targets"):
                    failures.append(f"panel {p.get('title')!r} has no query")
                for t in p.get("targets", []):
                    if t.get("datasource", {}).get("uid") != "${datasource}":
                        failures.append(f"panel {p.get('title')!r}: a target without ${{datasource}}")
            check_panels(p.get("panels", []))

    check_panels(dash.get("panels", []))
    if len(ids) != len(set(ids)):
        failures.append("panel ids repeat")
    for v in dash["templating"]["list"]:
        if v.get("type") == "query" and v.get("datasource", {}).get("uid") != "${datasource}":
            failures.append(f"variable {v['name']} does not use ${{datasource}}")
    # The per-GPU row shows the readings the issue names.
    for want in ("gpudoctor_gpu_temperature_celsius", "gpudoctor_gpu_power_usage_watts",
                 "gpudoctor_gpu_sm_clock_hertz", "gpudoctor_gpu_memory_used_bytes",
                 "gpudoctor_gpu_utilization_ratio", "gpudoctor_gpu_clocks_event_reason",
                 "gpudoctor_gpu_ecc_errors_total", "gpudoctor_verdict",
                 "gpudoctor_xid_events_total"):
        if want not in {n for _, e in exprs for n in METRIC.findall(e)}:
            failures.append(f"the dashboard shows no {want}")

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if not failures:
        print(f"ok: {len(exprs)} dashboard and {len(rules)} rule expressions use "
              f"{len(used)} documented metrics")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
