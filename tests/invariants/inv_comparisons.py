"""Invariant (b): every check that compares numbers states the comparison it
made, and its verdict agrees with those numbers (issue 14: "driver too old"
next to a version line that shows the driver new enough).

A finding's comparisons (report findings[].comparisons, src/checks/compare.h)
state requirements for health, `actual OP required`. For each finding:
  - each comparison is re-decided here from kind/actual/op/required with this
    module's own parsing (dotted versions part by part as numbers, bytes as
    integers, numbers as floats); the stated `met` must agree;
  - its evidence holds the comparison's rendered line, exactly as
    comparison_text() renders it, so the text a person reads and the numbers
    cannot drift apart;
  - the verdict follows: an ok finding has every requirement met, a warn or
    fail finding at least one not met (info and n/a: no constraint);
  - the checks in MUST_COMPARE, when ok, warn or fail, state at least one comparison or
    say which value was unknown ("not compared: ..."), so a check cannot dodge
    the invariant by stating nothing.
"""
import math

# Finding ids whose verdict rests on numbers: each, when ok/warn/fail, states a
# comparison or names the value it could not compare.
MUST_COMPARE = {
    "driver.too-old-for-cuda": "CUDA version the driver supports vs the runtime's",
    "driver.library-mismatch": "library versions vs the kernel module's",
    "container.driver-mismatch": "container library versions vs the host module's",
    "pcie.link-degraded": "link width and speed vs the GPU's and slot's maximum",
    "thermal.high": "temperatures vs NVML's thresholds",
    "memory.held-by-other-process": "memory held by others vs the GPU's total",
    "gpu.missing": "GPUs NVML/CUDA can use vs GPUs on the PCI bus",
}

OPS = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
    ">=": lambda c: c >= 0,
    ">": lambda c: c > 0,
}


def version_parts(text):
    parts = text.split(".")
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    return [int(p) for p in parts]


def three_way(kind, actual, required):
    """-1/0/1, or None when a value does not parse as `kind`."""
    if kind == "version":
        a, b = version_parts(actual), version_parts(required)
        if a is None or b is None:
            return None
        n = max(len(a), len(b))
        a, b = a + [0] * (n - len(a)), b + [0] * (n - len(b))
    elif kind == "bytes":
        if not (actual.isdigit() and required.isdigit()):
            return None
        a, b = int(actual), int(required)
    elif kind == "number":
        try:
            a, b = float(actual), float(required)
        except ValueError:
            return None
        if not (math.isfinite(a) and math.isfinite(b)):
            return None
    else:
        return None
    return (a > b) - (a < b)


def gib(text):
    """format_bytes() of src/checks/util.cc: "14.9 GiB"."""
    v, u = float(int(text)), 0
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    while v >= 1024 and u < 5:
        v /= 1024
        u += 1
    return f"{v:.0f} {units[u]}" if u == 0 else f"{v:.1f} {units[u]}"


def rendered(c):
    """comparison_text() of src/checks/compare.cc."""
    def value(v):
        return f"{gib(v)} ({v} bytes)" if c["kind"] == "bytes" else v
    verdict = "(requirement met)" if c["met"] else "(requirement NOT met)"
    return f"{c['what']}: {value(c['actual'])} {c['op']} {value(c['required'])} {verdict}"


def check_finding(f):
    out = []
    label = f"{f.get('id')} [{f.get('severity')}]"
    comparisons = f.get("comparisons", [])
    evidence = f.get("evidence", [])
    for c in comparisons:
        missing = [k for k in ("what", "kind", "actual", "op", "required", "met") if k not in c]
        if missing:
            out.append(f"{label}: comparison lacks {missing}: {c}")
            continue
        if c["op"] not in OPS:
            out.append(f"{label}: unknown op {c['op']!r} in {c['what']!r}")
            continue
        cmp = three_way(c["kind"], c["actual"], c["required"])
        # An unreadable value proves nothing healthy: met must be false.
        met = cmp is not None and OPS[c["op"]](cmp)
        if met != c["met"]:
            out.append(f"{label}: {c['what']!r}: {c['actual']} {c['op']} {c['required']} "
                       f"({c['kind']}) is {'met' if met else 'not met'}, the finding says "
                       f"{'met' if c['met'] else 'not met'}")
        if c["kind"] == "bytes" and not (c["actual"].isdigit() and c["required"].isdigit()):
            continue
        line = rendered(c)
        if line not in evidence:
            out.append(f"{label}: evidence lacks the comparison's line {line!r}")
    sev = f.get("severity")
    if comparisons:
        all_met = all(c.get("met") is True for c in comparisons)
        if sev == "ok" and not all_met:
            out.append(f"{label}: ok although a requirement is not met: " +
                       "; ".join(c["what"] for c in comparisons if not c.get("met")))
        if sev in ("warn", "fail") and all_met:
            out.append(f"{label}: {sev} although every requirement it states is met: " +
                       "; ".join(c["what"] for c in comparisons))
        if sev == "n/a":
            out.append(f"{label}: n/a yet states comparisons")
    elif f.get("id") in MUST_COMPARE and sev in ("ok", "warn", "fail"):
        if not any(e.startswith("not compared: ") for e in evidence):
            out.append(f"{label}: states no comparison ({MUST_COMPARE[f['id']]}) and names "
                       "no value it could not compare")
    return out


def check(name, snapshot, report):
    del name, snapshot  # the report alone must be consistent
    out = []
    for f in report.get("findings", []):
        out += check_finding(f)
    return out


if __name__ == "__main__":
    # Self-test on hand-made findings: each broken one must be caught.
    ok = {"id": "x", "severity": "ok", "evidence": [], "comparisons": [
        {"what": "w", "kind": "version", "actual": "550.54.14", "op": ">=",
         "required": "550.54.9", "met": True}]}
    ok["evidence"] = [rendered(ok["comparisons"][0])]
    assert check_finding(ok) == [], check_finding(ok)
    lying = dict(ok, comparisons=[dict(ok["comparisons"][0], met=False)])
    assert check_finding(lying), "a wrong met must be caught"
    string_order = dict(ok, comparisons=[dict(ok["comparisons"][0], actual="10.0",
                                              required="9.2")])
    assert any("lacks" in v for v in check_finding(string_order))
    failing = dict(ok, severity="fail")
    assert check_finding(failing), "fail with all met must be caught"
    silent = {"id": "thermal.high", "severity": "ok", "evidence": []}
    assert check_finding(silent), "a numeric check stating nothing must be caught"
    b = {"what": "lim", "kind": "bytes", "actual": "16000000000", "op": ">=",
         "required": "13421772800", "met": True}
    assert rendered(b) == ("lim: 14.9 GiB (16000000000 bytes) >= 12.5 GiB (13421772800 bytes) "
                           "(requirement met)"), rendered(b)
    print("inv_comparisons self-test ok")
