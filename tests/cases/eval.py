#!/usr/bin/env python3
"""How well `gpudoctor explain` names the confirmed cause of real error text.

    eval.py GPUDOCTOR [--verbose] [--check]

Each tests/cases/*.json record is one public thread: the error text as
posted (verbatim), its URL, the cause the thread confirmed and the finding
id(s) gpudoctor should name first (README.md in this folder). The text goes
to `gpudoctor explain --json` on stdin, and the ranked findings that say
something (fail, warn, info; the report's own order) are scored:

  top-1   the first of them is an expected id;
  top-3   an expected id is among the first three;
  false alarm   a case marked false_alarm gets a failing verdict;
  crash   explain exits other than 0, 1, 2 or 3 (understood nothing), or
          prints no JSON.

The corpus is split in two halves by a stable hash of each thread's URL:
"tune" (rules may be shaped on it) and "measure" (only measured), so a rule
that memorizes one thread shows as a gap between the two. Both are reported.
Per class, every miss is listed with what came first instead.

--check fails (exit 1) when the whole corpus falls below the FLOOR below,
has more false alarms than it allows, a crash, or a malformed record. The floor rises as
explain learns; the goal is 90 % top-1, 97 % top-3, no false alarm, no crash.
"""
import collections
import glob
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Raised as explain learns (the docstring has the goal). First measured on
# the 164 cases of 2026-12-05: 38.0 % top-1, 48.9 % top-3, one false alarm
# (b-ipex-comfyui-1: "Found no NVIDIA driver" from an Intel image on a
# machine without an NVIDIA GPU, which the text alone cannot tell).
# Then explain learned error texts from the code table and a phrase table
# taken from the tune half: 48.2 % top-1 (tune 52.4, measure 41.8), 59.1 %
# top-3; with pynvml's exception names and more tune-half phrases, 49.6 %
# (tune 54.9, measure 41.8) and 61.3 %; with docker-compose and a `docker
# run` without --gpus read as container context, 51.1 % (tune 57.3, measure
# 41.8) and 62.0 %; with the number forms ("returned N", "error=N", ...),
# 51.1 % and 62.8 % (measure top-3 58.2). Then (2026-12-05, second
# session): causes the driver confirms in a pasted kernel log, a check's n/a
# leaving its id to the possible causes, command-line assignments,
# visible-devices.invalid before hides-all, /dev/shm and the PCIe-only NCCL
# hang, the module missing for the running kernel: 65.0 % top-1 (tune 74.4,
# measure 50.9), 74.5 % top-3 (measure 65.5). A prior from the tune half's
# cause counts was tried as a tie-break and dropped: measure top-1 fell.
# A missing /dev/nvidia* or nvidia_uvm named in any words (facts §7.5):
# 66.4 % (measure 54.5), 75.9 % (measure 69.1); with NVML's texts in their
# printed forms and nvidia-installer's load failure, 67.2 % (tune 75.6,
# measure 54.5) and 77.4 % (measure 69.1). Third session: a documented prior
# for a lone 999 and 100 (docs/explain.md "Priors"), the new
# visible-devices.ordinal-out-of-range, a driver too old in its other words
# (missing entry points, the NGC banner, nvidia-docker 1), a node with
# nvidia.com/gpu: 0: on those 164 cases 75.2 % (measure 67.3) and 81.0 %
# (measure 76.4). The corpus then grew to 202 with 38 cases from five new
# searches (d-*: driver too old, device ordinals, UVM and suspend,
# Kubernetes, WSL), 12 of them expecting ids not built yet (WSL, a machine
# without a GPU, a reboot pending after a driver install): 71.3 % (tune
# 76.8, measure 64.0) and 75.9 % (measure 70.7) on all 202. The floor
# follows the larger corpus. With /proc/driver/nvidia said missing and the
# WSL ids (check `wsl`, WSL 1's kernel string in a paste): 72.4 % (tune
# 76.8, measure 66.7) and 77.0 % (measure 73.3); with nvidia-container-cli's
# "driver error" and a prompt on a Windows-named host as WSL: 73.6 % (tune
# 78.8, measure 66.7) and 78.2 % (measure 73.3). Six more threads, read
# after those rules were made, all named first: 208 cases, 74.4 % (tune
# 79.4, measure 67.9) and 78.9 % (measure 74.4).
# 2026-12-05: 32 new threads (d-sel-*, d-reg-*, d-gen-*: SELinux and
# rootless nodes, driver regressions, and a general sample of CUDA-start
# failures), scored before any rule for them: of the 13 general ones 2 were
# named first, and 2 of all 32. The whole corpus fell to 64.2 % (tune 66.4,
# measure 61.1) and 68.9 %. With devnodes.selinux-denied,
# devnodes.rootless-denied and driver.known-regression (each a live check
# too) and two phrase rows from tune threads: 68.4 % (tune 73.8, measure
# 61.1) and 73.6 % (measure 67.8); the floor follows it down, the trail
# stays here. 21 more threads for thin classes (d-mem-*, d-thin-*: memory
# held, exclusive compute mode, MIG, nouveau, permissions, compat 803, device
# order, capabilities, HMM), scored before any rule: 7 named first; the
# corpus 66.1 % (tune 71.4, measure 59.0). With the allocators' and an
# earlier runtime's wordings, slurmd's MIG line and nouveau named as a
# signal: 69.5 % (tune 75.9, measure 61.0) and 74.7 % (measure 68.0).
# Then a random sample: 23 threads found by the phrases users search for,
# taken as they came (d-rnd-*, d-rnd2-*), scored before any rule: 4 named
# first (8 of the 23 have causes explain has no id for). The corpus 65.6 %
# (tune 75.9, measure 53.8: the hash put 19 of them in the measure half).
# With the fabric manager's version-mismatch line, PyCUDA's invalid device
# and the device plugin's crash loop: 66.0 % (tune 76.6, measure 53.8) and
# 71.9 %.
# With check program-arch (CUDA error 209 and PyTorch's sm_XY warning, from the
# runtime reference's meaning of 209): 67.2 % (tune 77.4, measure 55.5) and 73.0 %.
# With the fabric chain's own ids (docs/fabric.md: a version mismatch, a
# restart without a GPU reset, NVLSM's missing ib_umad, nvidia-smi -q's
# fabric block; the dstack case's 802 alone now names the wrong link of it):
# 68.8 % (tune 81.0, measure 54.6) and 75.0 %.
FLOOR = {"top1": 0.68, "top3": 0.74, "false_alarms": 1}
REQUIRED = ("id", "url", "title", "symptom", "cause", "fix", "confirmed_by", "confirmation",
            "class", "expected", "false_alarm", "context")
SAYS_SOMETHING = ("fail", "warn", "info")
MAX_SYMPTOM_LINES = 40


def half_of(url):
    return "tune" if int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) % 2 == 0 else "measure"


def load_cases():
    cases, problems = [], []
    for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        name = os.path.basename(path)
        try:
            with open(path) as f:
                c = json.load(f)
        except (OSError, ValueError) as e:
            problems.append("%s: not JSON: %s" % (name, e))
            continue
        missing = [k for k in REQUIRED if k not in c]
        if missing:
            problems.append("%s: missing %s" % (name, ", ".join(missing)))
            continue
        if c["id"] + ".json" != name:
            problems.append("%s: id %r does not match the file name" % (name, c["id"]))
        if not str(c["url"]).startswith(("http://", "https://")):
            problems.append("%s: url %r is no link" % (name, c["url"]))
        if len(c["symptom"].splitlines()) > MAX_SYMPTOM_LINES:
            problems.append("%s: symptom over %d lines" % (name, MAX_SYMPTOM_LINES))
        if not isinstance(c["expected"], list) or (not c["expected"] and not c["false_alarm"]):
            problems.append("%s: expected must list the ids (empty only for a false alarm)" % name)
        cases.append(c)
    return cases, problems


def explain(gd, text):
    """(ranked ids, verdict, crash reason or None)."""
    try:
        p = subprocess.run([gd, "explain", "--json"], input=text, capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, LC_ALL="C", NO_COLOR="1"))
    except subprocess.TimeoutExpired:
        return [], None, "timed out"
    # 3: explain understood nothing in the text (no finding): a miss, not a crash.
    if p.returncode not in (0, 1, 2, 3):
        return [], None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return [], None, "no JSON on stdout"
    ranked = [f["id"] for f in doc.get("findings", []) if f.get("severity") in SAYS_SOMETHING]
    return ranked, doc.get("verdict"), None


def pct(n, d):
    return "%5.1f %%" % (100.0 * n / d) if d else "    - "


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gd = sys.argv[1]
    verbose = "--verbose" in sys.argv
    cases, problems = load_cases()
    for p in problems:
        print("MALFORMED " + p)

    # (half, class) -> [cases, top1, top3]
    score = collections.defaultdict(lambda: [0, 0, 0])
    false_alarms, crashes, misses = [], [], []
    for c in cases:
        ranked, verdict, crash = explain(gd, c["symptom"])
        if crash:
            crashes.append("%s: %s" % (c["id"], crash))
            continue
        if c["false_alarm"]:
            if verdict == "fail":
                false_alarms.append("%s: verdict fail, first %s (%s)" % (c["id"], ranked[:3], c["url"]))
            if not c["expected"]:
                continue
        expected = set(c["expected"])
        top1 = bool(ranked) and ranked[0] in expected
        top3 = bool(expected & set(ranked[:3]))
        for key in ((half_of(c["url"]), c["class"]), ("all", c["class"])):
            s = score[key]
            s[0] += 1
            s[1] += top1
            s[2] += top3
        if not top1:
            misses.append((c["class"], c["id"], half_of(c["url"]), sorted(expected), ranked[:3],
                           c["url"]))

    classes = sorted({k[1] for k in score})
    print("%-34s %5s %8s %8s" % ("class", "cases", "top-1", "top-3"))
    for cl in classes:
        n, t1, t3 = score[("all", cl)]
        print("%-34s %5d %8s %8s" % (cl, n, pct(t1, n), pct(t3, n)))
    totals = {}
    for half in ("tune", "measure", "all"):
        n = sum(v[0] for k, v in score.items() if k[0] == half)
        t1 = sum(v[1] for k, v in score.items() if k[0] == half)
        t3 = sum(v[2] for k, v in score.items() if k[0] == half)
        totals[half] = (n, t1, t3)
        print("%-34s %5d %8s %8s" % ("TOTAL " + half, n, pct(t1, n), pct(t3, n)))
    print("%d cases (%d false-alarm traps), %d classes; %d false alarms, %d crashes, %d malformed"
          % (len(cases), sum(1 for c in cases if c["false_alarm"]), len(classes),
             len(false_alarms), len(crashes), len(problems)))
    for line in false_alarms:
        print("FALSE ALARM " + line)
    for line in crashes:
        print("CRASH " + line)
    if verbose or "--check" not in sys.argv:
        for cl, cid, half, want, got, url in sorted(misses):
            print("MISS %-28s %-30s %-7s want %s, first %s  %s" % (cl, cid, half, want, got, url))

    if "--check" in sys.argv:
        n, t1, t3 = totals["all"]
        low = n and (t1 / n < FLOOR["top1"] or t3 / n < FLOOR["top3"])
        if problems or crashes or len(false_alarms) > FLOOR["false_alarms"] or low or not cases:
            print("below the floor %s, or a false alarm, crash or malformed record" % FLOOR)
            sys.exit(1)
        print("ok (floor %s)" % FLOOR)


if __name__ == "__main__":
    main()
