"""Invariant (c): a check whose input is missing names the missing field
(shared/DESIGN.md: "checks use every observed field and say which one was
missing, instead of going n/a as a whole").

check(): in every fixture, an n/a finding from a check that needs
(src/checks/registry.cc) a probe that recorded gaps (probes[].gaps: field and
reason), in a field the check's own source reads, names one of those fields or the file it comes from (or, when the
reason is another needed probe that read nothing, that probe).

extra(): each recorded root (tests/roots) is probed live again on a copy with
one input removed at a time, and
  (i)   nothing crashes (snapshot and check --from exit as designed);
  (ii)  the probe record lists that input as a gap;
  (iii) no finding flips to fail because of the removal alone;
  (iv)  a finding that decided before (not n/a) still decides, unless it names
        the removed input as the reason it cannot.
"""
import json
import os
import re
import shutil
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The single inputs removed in turn (paths under a root), where the root has them.
INPUTS = [
    "proc/meminfo",
    "proc/modules",
    "proc/devices",
    "proc/driver/nvidia/version",
    "proc/driver/nvidia/params",
    "proc/self/limits",
    "proc/self/status",
    "proc/sys/vm/overcommit_memory",
    "proc/cmdline",
]

# A recorded tree without these stands for this very process (probe/
# process_identity.cc: the tree's credentials and rlimits when it has them,
# else the live ones), so their absence is no gap; the other rules still hold.
LIVE_FALLBACK = {"proc/self/limits", "proc/self/status"}


def registry_needs():
    """{check name: [probe names]} from the registry table."""
    with open(os.path.join(SRC, "src", "checks", "registry.cc"), encoding="utf-8") as f:
        text = f.read()
    rx = re.compile(r'\{"([a-z0-9-]+)", "(?:[^"\\]|\\.)*", \{[^}]*\}, check_\w+'
                    r'(?:, \{([^}]*)\})?\}')
    out = {}
    for m in rx.finditer(text):
        out[m.group(1)] = re.findall(r'"([^"]+)"', m.group(2) or "")
    assert len(out) >= 30, "cannot read the registry table of src/checks/registry.cc"
    return out


NEEDS = registry_needs()

# n/a reasons that no gap causes: the check gives up before it reads the
# field of the gap (cgroup v2 keeps its device rules in an eBPF program,
# which no file shows), so naming the gap would only mislead.
NA_WITHOUT_GAP = {"cgroup-devices": "cgroup v2 uses an eBPF filter"}


def check_sources():
    """{check name: the text of the src/checks/*.cc file defining its function}."""
    with open(os.path.join(SRC, "src", "checks", "registry.cc"), encoding="utf-8") as f:
        table = dict(re.findall(r'\{"([a-z0-9-]+)", "(?:[^"\\]|\\.)*", \{[^}]*\}, (check_\w+)',
                                f.read()))
    files = {}
    checks_dir = os.path.join(SRC, "src", "checks")
    for fname in os.listdir(checks_dir):
        if fname.endswith(".cc") and fname != "registry.cc":
            with open(os.path.join(checks_dir, fname), encoding="utf-8") as f:
                files[fname] = f.read()
    out = {}
    for name, fn in table.items():
        out[name] = next((t for t in files.values()
                          if re.search(r"std::vector<Finding> " + fn + r"\(", t)), "")
    return out


SOURCES = check_sources()


def reads(check_name, gap):
    """Does the check's own source read the gap's field (".mem_total_bytes")?
    Unknown checks count as reading everything."""
    src = SOURCES.get(check_name)
    if not src:
        return True
    return "." + gap.get("field", "").split(".")[-1] in src


def names(text, gap):
    """Does text name the gap's field, the field's last part, or a path in its reason?"""
    field = gap.get("field", "")
    words = {field, field.split(".")[-1]}
    words |= set(re.findall(r"/[\w./-]+", gap.get("reason", "") + " " + field))
    return any(w and w in text for w in words)


def finding_text(f):
    return " ".join([f.get("summary", "")] + list(f.get("evidence", [])))


def names_probe(text, p):
    """Does text name a probe that did not read, by name or by a path in its detail?"""
    if p.get("name", "").lower() in text.lower():
        return True
    return any(w in text for w in re.findall(r"/[\w./-]+", p.get("detail", "")))


def check(name, snapshot, report):
    """An n/a finding of a check whose needed probe recorded gaps names one
    of those gaps, or the other needed probe that did not read at all (NVML
    not loaded, say), which is then the reason it cannot decide.

    Findings that do decide (ok, warn, fail) with a gap in a needed probe are
    held to it by extra()'s (iv): which field decided them is not in the
    report, but removing one input at a time shows it."""
    probes = {p["name"]: p for p in snapshot.get("probes", [])}
    out = []
    for f in report.get("findings", []):
        if f["severity"] != "n/a":
            continue
        needed = [probes[n] for n in NEEDS.get(f.get("check", ""), []) if n in probes]
        gaps = [(p["name"], g) for p in needed for g in p.get("gaps") or []
                if reads(f.get("check", ""), g)]
        if not gaps:
            continue
        text = finding_text(f)
        if NA_WITHOUT_GAP.get(f.get("check", ""), "\0") in text:
            continue
        if any(names(text, g) for _, g in gaps):
            continue
        if any(p.get("status") != "ok" and not p.get("gaps") and names_probe(text, p)
               for p in needed):
            continue
        # "(see driver.not-loaded)": another finding decided from what was
        # read, and this one follows from it.
        if any(g["id"] in text and g["severity"] in ("fail", "warn")
               for g in report.get("findings", []) if g is not f):
            continue
        out.append(f"{f['id']} is n/a and names none of its inputs' gaps "
                   f"{sorted(set(pn + ':' + g.get('field', '') for pn, g in gaps))}: "
                   f"{f['summary']}")
    return out


# ---------------------------------------------------------------- mutations

def root_pairs():
    """(root, fake or None) for each recorded root: the fake of its name, else
    the one its first e2e scenario uses."""
    roots_dir = os.path.join(SRC, "tests", "roots")
    fakes_dir = os.path.join(SRC, "tests", "fakes", "scenarios")
    by_root = {}
    scen_dir = os.path.join(SRC, "tests", "scenarios")
    for fname in sorted(os.listdir(scen_dir)):
        if fname.endswith(".json"):
            with open(os.path.join(scen_dir, fname)) as f:
                sc = json.load(f)
            if sc.get("root") and sc.get("libs", "fake") == "fake" and not sc.get("env") \
                    and not sc.get("ulimit_v_kb"):
                by_root.setdefault(sc["root"], sc.get("fake"))
    out = []
    for root in sorted(os.listdir(roots_dir)):
        if not os.path.isdir(os.path.join(roots_dir, root)):
            continue
        fake = root if os.path.exists(os.path.join(fakes_dir, root + ".json")) \
            else by_root.get(root)
        out.append((root, fake))
    return out


def severities(report):
    return {(f["id"], tuple(f.get("gpus", []))): f for f in report.get("findings", [])}


def lists_gap(snapshot, path):
    rel = "/" + path
    for p in snapshot.get("probes", []):
        for g in p.get("gaps") or []:
            if rel in g.get("field", "") or rel in g.get("reason", ""):
                return True
    return False


def mutate_one(ctx, root, fake, path, base):
    out = []
    with tempfile.TemporaryDirectory(prefix="gd-inv-mut-") as tmp:
        copy = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(SRC, "tests", "roots", root), copy, symlinks=True)
        os.remove(os.path.join(copy, path))
        snap, report, err = ctx.probe(copy, fake, "fake" if fake else "none")
    tag = f"{root} without /{path}"
    if err:
        return [f"{tag}: {err}"]
    if path not in LIVE_FALLBACK and not lists_gap(snap, path):
        out.append(f"{tag}: no probe lists /{path} among its gaps")
    before = severities(base)
    for key, f in severities(report).items():
        was = before.get(key)
        if was is None:
            continue
        if f["severity"] == "fail" and was["severity"] != "fail":
            out.append(f"{tag}: {f['id']} flips {was['severity']} -> fail: {f['summary']}")
        if f["severity"] == "n/a" and was["severity"] != "n/a" and \
                "/" + path not in finding_text(f):
            out.append(f"{tag}: {f['id']} stops deciding ({was['severity']} -> n/a) and does "
                       f"not name /{path}: {f['summary']}")
    return out


def extra(ctx):
    jobs = []
    bases = {}
    pairs = root_pairs()
    for root, fake, base in ctx.pool.map(
            lambda rf: (rf[0], rf[1], ctx.probe(os.path.join(SRC, "tests", "roots", rf[0]),
                                                rf[1], "fake" if rf[1] else "none")), pairs):
        bases[root] = base
    out = []
    for root, fake in pairs:
        snap, report, err = bases[root]
        if err:
            out.append(f"{root}: the unchanged root does not probe: {err}")
            continue
        for path in INPUTS:
            if os.path.isfile(os.path.join(SRC, "tests", "roots", root, path)):
                jobs.append((root, fake, path, report))
    for found in ctx.pool.map(lambda j: mutate_one(ctx, *j), jobs):
        out += found
    return out
