#!/usr/bin/env python3
"""How well `gpudoctor explain` names the confirmed cause of real error text.

    eval.py GPUDOCTOR [--verbose] [--check] [--only PREFIX]

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

Generalization, not memory: each case is scored again "cross-repository":
a hit counts there only when a rule that put the right id in place (the
finding's `signals`: "cuda:999", "phrase:<case>", "check:uvm") also ranks a
case of another repository right. A rule whose only support is one
repository's own cases is listed (SINGLE-REPO). Also printed: the share of
empty answers (no finding beyond explain.unattributed) on text that holds an
error code or a component word, found by a deliberately simple detector of
its own (CODE_OR_COMPONENT below), a second opinion on explain's recognizer.
--only PREFIX scores the cases whose id starts with it (a batch).

--check fails (exit 1) when the whole corpus falls below the FLOOR below,
has more false alarms than it allows, a crash, or a malformed record. The floor rises as
explain learns; the goal is 90 % top-1, 97 % top-3, no false alarm, no crash.
"""
import collections
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.parse

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
# Issue 36 (2026-12-07): one recognizer of codes in any wrapper, a cause
# row for every code, component words, unknown instead of ok: on the 256
# cases then held, 69.5 % (tune 81.0, measure 56.3) and 75.8 %. Three new
# batches: e-op-* (14, the operators' pastes of the issue, read while the
# rules were written) and a held-out batch e-new1-*/e-new2-* (37 threads from
# Caffe, TensorFlow, JAX, Numba, CuPy, CUDA.jl, cudarc/candle, R torch,
# MATLAB, Blender, ollama, llama.cpp, ComfyUI, collected by people who did
# not run explain, and scored before any rule for them): 22.9 % top-1 and
# 25.7 % top-3 (cross-repository 20.0 %), 2 false alarms (a Caffe OOM of
# the user's own batch read as a start failure; an unversioned libcuda.so
# dlopen). 19 of its 35 expect an id explain does not have (new:*: a CPU
# build of the framework, a library version, a host without a GPU, hybrid
# graphics). After rules for those two traps (an OOM outside a start call
# is an allocation; "libcuda.so:" is the program's lookup): the whole
# corpus of 304 scored cases 65.1 % (tune 73.8, measure 55.0) and 70.7 %,
# cross-repository 52.6 % and 56.9 %, e-new 25.7 %, e-op 76.9 % / 92.3 %.
# The floor follows the larger corpus down; the trail stays here.
# Then ids for the two commonest causes the batch had none for, from the
# frameworks' own words (program.framework-without-cuda: "Torch not compiled
# with CUDA enabled" and R torch's; program.cuda-library-mismatch: TensorFlow's
# and XLA's library checks), with two PyTorch threads read for them (f-*):
# 306 scored cases 67.3 % (tune 75.8, measure 57.4) and 72.9 %,
# cross-repository 52.9 % and 57.2 %; e-new 37.1 %.
FLOOR = {"top1": 0.66, "top3": 0.72, "false_alarms": 1}
REQUIRED = ("id", "url", "title", "symptom", "cause", "fix", "confirmed_by", "confirmation",
            "class", "expected", "false_alarm", "context")
SAYS_SOMETHING = ("fail", "warn", "info")
MAX_SYMPTOM_LINES = 40


# An error code in a common wrapper, or a component of the stack named in
# words: text on which an empty answer is a miss of the recognizer.
CODE_OR_COMPONENT = re.compile(
    r"CUDA_ERROR_\w+|cudaError\w+|NVML_ERROR_\w+|NVMLError_\w+|nccl[A-Z]\w+Error|"
    r"\(\d+ vs\. \d+\)|\b(?:cuda )?error[ =:(]*\d{1,3}\b|fabric ?manager|nvidia[_-]uvm|nouveau|"
    r"secure boot|\bmig\b|ulimit|cgroup|\bcdi\b|device plugin|iommu|\bacs\b|suspend|dkms",
    re.IGNORECASE)


def repo_of(url):
    """github.com/owner/name -> owner/name; other sites by host."""
    u = urllib.parse.urlparse(url)
    parts = [x for x in u.path.split("/") if x]
    if u.netloc.endswith("github.com") and len(parts) >= 2:
        return "%s/%s" % (parts[0], parts[1].lower())
    return u.netloc


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
    """(ranked [(id, signals)], verdict, crash reason or None)."""
    try:
        p = subprocess.run([gd, "explain", "--json"], input=text, capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, LC_ALL="C", NO_COLOR="1"))
    except subprocess.TimeoutExpired:
        return [], None, "timed out"
    # 3: explain understood nothing in the text, or could not attribute the
    # error it saw (verdict unknown): a miss, not a crash.
    if p.returncode not in (0, 1, 2, 3):
        return [], None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return [], None, "no JSON on stdout"
    ranked = [(f["id"], f.get("signals", [])) for f in doc.get("findings", [])
              if f.get("severity") in SAYS_SOMETHING]
    return ranked, doc.get("verdict"), None


def pct(n, d):
    return "%5.1f %%" % (100.0 * n / d) if d else "    - "


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gd = sys.argv[1]
    verbose = "--verbose" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    cases, problems = load_cases()
    for p in problems:
        print("MALFORMED " + p)

    # (half, class) -> [cases, top1, top3]
    score = collections.defaultdict(lambda: [0, 0, 0])
    false_alarms, crashes, misses, scored = [], [], [], []
    support = collections.defaultdict(set)  # rule -> repositories of the cases it ranks right
    empty = [0, 0]  # [empty answers, cases] on text with a code or component word
    for c in cases:
        ranked, verdict, crash = explain(gd, c["symptom"])
        # Every case supports rules; only the batch asked for is scored.
        if not c["id"].startswith(only):
            if not crash and c["expected"] and ranked and ranked[0][0] in c["expected"]:
                for r in ranked[0][1]:
                    support[r].add(repo_of(c["url"]))
            continue
        if crash:
            crashes.append("%s: %s" % (c["id"], crash))
            continue
        if c["false_alarm"]:
            if verdict == "fail":
                false_alarms.append("%s: verdict fail, first %s (%s)"
                                    % (c["id"], [i for i, _ in ranked[:3]], c["url"]))
            if not c["expected"]:
                continue
        ids = [i for i, _ in ranked]
        if CODE_OR_COMPONENT.search(c["symptom"]):
            empty[1] += 1
            empty[0] += not [i for i in ids if i != "explain.unattributed"]
        expected = set(c["expected"])
        top1 = bool(ids) and ids[0] in expected
        top3 = bool(expected & set(ids[:3]))
        repo = repo_of(c["url"])
        # The rules that placed the right id: those of its finding.
        rules1 = set(ranked[0][1]) if top1 else set()
        rules3 = set(sig for i, sigs in ranked[:3] if i in expected for sig in sigs)
        for r in rules1:
            support[r].add(repo)
        scored.append((c, repo, top1, top3, rules1, rules3))
        for key in ((half_of(c["url"]), c["class"]), ("all", c["class"])):
            s = score[key]
            s[0] += 1
            s[1] += top1
            s[2] += top3
        if not top1:
            misses.append((c["class"], c["id"], half_of(c["url"]), sorted(expected), ids[:3],
                           c["url"]))
    # Cross-repository: a hit whose rules some other repository's case supports too.
    cross = [0, 0, 0]
    for c, repo, top1, top3, rules1, rules3 in scored:
        elsewhere = lambda rules: any(support[r] - {repo} for r in rules)
        cross[0] += 1
        cross[1] += top1 and elsewhere(rules1)
        cross[2] += top3 and (elsewhere(rules3) or (top1 and elsewhere(rules1)))

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
    print("%-34s %5d %8s %8s" % ("TOTAL cross-repository", cross[0], pct(cross[1], cross[0]),
                                 pct(cross[2], cross[0])))
    print("empty answers on text with an error code or component word: %d of %d (%s)"
          % (empty[0], empty[1], pct(empty[0], empty[1]).strip()))
    batch = [c for c in cases if c["id"].startswith(only)]
    print("%d cases (%d false-alarm traps), %d classes; %d false alarms, %d crashes, %d malformed"
          % (len(batch), sum(1 for c in batch if c["false_alarm"]), len(classes),
             len(false_alarms), len(crashes), len(problems)))
    for line in false_alarms:
        print("FALSE ALARM " + line)
    for line in crashes:
        print("CRASH " + line)
    if verbose or "--check" not in sys.argv:
        for rule in sorted(r for r, repos in support.items() if len(repos) == 1):
            print("SINGLE-REPO %-40s only %s" % (rule, next(iter(support[rule]))))
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
