#!/usr/bin/env python3
"""One interface: every command's flags and JSON keys, listed and checked.

    interface_test.py GPUDOCTOR

Flags come from `gpudoctor __cli-spec` (the CLI11 setup itself). JSON keys
come from every JSON golden the other suites keep equal to the tool's output
(tests/*/golden, tests/logs/cases) and from the commands whose JSON no
golden holds, run here on shipped snapshots. It fails on a second name for
one thing: a flag or key listed below under another name, a flag whose value
means different things in different commands, a short flag paired with two
long ones, a reporting command without --json, a JSON document without a
schema, a time that is not ISO 8601. Then it builds the man pages and
completions (scripts/cli_docs.py) and tries them: groff without warnings,
bash completing commands, flags and files, zsh and fish parsing them.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, LC_ALL="C", TZ="UTC", NO_COLOR="1")
ENV.pop("CUDA_VISIBLE_DEVICES", None)

# Names that once meant, or would mean, what another name already does.
SECOND_FLAG_NAMES = {
    "--db": "--history", "--file": "--from", "--snapshot": "--from", "--input": "--from",
    "--output-format": "--format", "--json-output": "--json", "--database": "--history",
    "--since-time": "--since", "--gpu-ids": "--gpus", "--devices": "--gpus",
}
# A flag's value is one kind of thing everywhere, but for these.
VALUE_EXCEPTIONS = {
    # recorded input instead of this machine: a snapshot, or for logs a saved kernel log
    "--from": {"SNAPSHOT", "FILE"},
}
SHORT_FLAGS = {"-h": "--help", "-v": "--verbose", "-q": "--quiet", "-o": "--output",
               "-f": "--follow"}
# Commands without --json, and why.
NO_JSON = {
    "snapshot": "its output is JSON (gpudoctor.snapshot/v1)",
    "run": "stdout is the job's; --json-report FILE writes the report",
    "serve": "a daemon; /report.json serves the report",
}
# JSON keys that name what another key already names.
SECOND_KEYS = {"nvidia_smi_index": "nvml_index", "smi_index": "nvml_index", "bdf": "bus_id",
               "pci_address": "bus_id", "hostname": "host", "gpu_model": "name"}
# Keys holding a time: ISO 8601 (RFC 3339) or null.
TIME_KEYS = {"first", "last", "first_seen", "last_seen", "taken_at", "time", "now", "since",
             "started_at", "finished_at"}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def check_flags(spec):
    values = {}   # long flag -> {value kind: [commands]}
    pairs = {}    # short -> {long}
    for cmd in spec["commands"]:
        longs = set()
        for o in cmd["options"]:
            if o["positional"]:
                continue
            long = [n for n in o["names"] if n.startswith("--")]
            short = [n for n in o["names"] if not n.startswith("--")]
            for n in long:
                longs.add(n)
                if n in SECOND_FLAG_NAMES:
                    fail("%s %s: a second name for %s" % (cmd["name"], n, SECOND_FLAG_NAMES[n]))
                values.setdefault(n, {}).setdefault(o["value"], []).append(cmd["name"])
            for s in short:
                pairs.setdefault(s, set()).update(long)
        if "--help" not in longs:
            fail("%s has no --help" % cmd["name"])
        if "--json" not in longs and cmd["name"] not in NO_JSON:
            fail("%s has no --json" % cmd["name"])
    for flag, kinds in sorted(values.items()):
        allowed = VALUE_EXCEPTIONS.get(flag)
        if len(kinds) > 1 and not (allowed and set(kinds) <= allowed):
            fail("%s takes different values: %s" % (flag, kinds))
    for short, longs in sorted(pairs.items()):
        want = SHORT_FLAGS.get(short)
        if len(longs) != 1 or (want and longs != {want}):
            fail("%s means %s (want %s)" % (short, sorted(longs), want or "one flag"))
    n = sum(len(c["options"]) for c in spec["commands"])
    print("flags: %d commands, %d options, %d distinct long flags"
          % (len(spec["commands"]), n, len(values)))


def walk(doc, path, where):
    if isinstance(doc, dict):
        gpu_object = "bus_id" in doc or "uuid" in doc
        for k, v in doc.items():
            if k in SECOND_KEYS:
                fail("%s: %s.%s: a second name for %s" % (where, path, k, SECOND_KEYS[k]))
            if k == "model" and gpu_object:
                fail("%s: %s.model: a GPU's name is `name`" % (where, path))
            # (a golden's placeholder for a time that changes, "<taken_at>", passes)
            if k in TIME_KEYS and isinstance(v, str) and not ISO.match(v) \
                    and not (v.startswith("<") and v.endswith(">")):
                fail("%s: %s.%s = %r is not ISO 8601" % (where, path, k, v))
            walk(v, path + "." + k, where)
    elif isinstance(doc, list):
        for v in doc:
            walk(v, path + "[]", where)


def check_document(doc, where):
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("gpudoctor."):
        fail("%s: no gpudoctor.* schema at the top" % where)
    walk(doc, "", where)


def check_json(gpudoctor):
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "*", "golden", "**", "*.json"),
                             recursive=True) + glob.glob(os.path.join(ROOT, "tests/logs/cases/*.json")))
    for f in files:
        with open(f) as fh:
            check_document(json.load(fh), os.path.relpath(f, ROOT))
    snap = "tests/snapshots/ws-4x4090.json"
    runs = [["env", "--json", "--from", snap], ["labels", "--json", "--from", snap],
            ["check", "--json", "--from", snap], ["topo", "--json", "--from", snap],
            ["check", "--list-checks", "--json"],
            ["logs", "--json", "--from", "tests/logs/cases/kern-aer.log"]]
    for args in runs:
        p = subprocess.run([gpudoctor] + args, capture_output=True, text=True, env=ENV, cwd=ROOT,
                           timeout=60)
        if p.returncode not in (0, 1, 2):
            fail("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
            continue
        check_document(json.loads(p.stdout), "gpudoctor " + " ".join(args))
    print("json: %d goldens and %d live outputs" % (len(files), len(runs)))


def complete_bash(script, words):
    """COMPREPLY of the generated bash completion for `words` (the last is the one completed)."""
    arr = " ".join("'%s'" % w for w in words)
    p = subprocess.run(["bash", "-c", 'source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; _gpudoctor; '
                        'printf "%%s\\n" "${COMPREPLY[@]}"' % (arr, len(words) - 1), "_", script],
                       capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=30)
    if p.returncode != 0:
        fail("bash completion of %s: %s" % (words, p.stderr.strip()))
    return p.stdout.split()


def check_generated(gpudoctor, spec):
    out = tempfile.mkdtemp(prefix="gd-cli-")
    try:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/cli_docs.py"), gpudoctor, out],
                       check=True, timeout=60)
        pages = sorted(glob.glob(os.path.join(out, "man", "*.1")))
        if len(pages) != len(spec["commands"]) + 1:
            fail("%d man pages for %d commands" % (len(pages), len(spec["commands"])))
        if shutil.which("groff"):
            p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"] + pages,
                               capture_output=True, text=True, timeout=60)
            if p.returncode != 0 or p.stderr.strip():
                fail("groff on the man pages: " + p.stderr.strip()[:500])
        bash = os.path.join(out, "completion", "gpudoctor.bash")
        expect = [
            (["gpudoctor", "hist"], "history"),
            (["gpudoctor", "history", "--hi"], "--history"),
            (["gpudoctor", "check", "--sk"], "--skip"),
            (["gpudoctor", "check", "--from", "tests/snapshots/ws-4x4090-u"],
             "tests/snapshots/ws-4x4090-ulimit.json"),
            (["gpudoctor", "labels", "--nfd-dir", "tests/snapsh"], "tests/snapshots"),
            (["gpudoctor", "run", "--", "bas"], "bash"),
        ]
        for words, want in expect:
            got = complete_bash(bash, words)
            if want not in got:
                fail("bash completion of %r: %r not in %r" % (" ".join(words), want, got[:10]))
        if shutil.which("zsh"):
            p = subprocess.run(["zsh", "-n", os.path.join(out, "completion", "_gpudoctor")],
                               capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                fail("zsh -n _gpudoctor: " + p.stderr.strip())
        if shutil.which("fish"):
            fish = os.path.join(out, "completion", "gpudoctor.fish")
            p = subprocess.run(["fish", "--no-config", "-c", "source %s; complete -C'gpudoctor history --h'"
                                % fish], capture_output=True, text=True, timeout=30)
            if p.returncode != 0 or "--history" not in p.stdout:
                fail("fish completion: %s %s" % (p.stdout.strip()[:200], p.stderr.strip()[:300]))
        print("generated: %d man pages, completion for bash%s%s" % (
            len(pages), ", zsh" if shutil.which("zsh") else "", ", fish" if shutil.which("fish") else ""))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def check_typos(gpudoctor):
    """A mistyped command, flag or finding id: one line with the nearest name, exit 64."""
    for args, near in ((["chekc"], "'check'"), (["check", "--jsno"], "'--json'"),
                       (["check", "--skip", "thermal.hgih"], "'thermal.high'"),
                       (["history", "--histroy", "x"], "'--history'")):
        p = subprocess.run([gpudoctor] + args, capture_output=True, text=True, env=ENV, timeout=30)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 64 or len(lines) != 1 or ("did you mean " + near) not in lines[0]:
            fail("%s: exit %d, %r (want 64 and one line naming %s)"
                 % (" ".join(args), p.returncode, p.stderr.strip(), near))
    print("typos: 4 answered with the nearest name")


def check_colour(gpudoctor):
    """Severities in colour on a terminal; plain with NO_COLOR, TERM=dumb or a pipe."""
    import pty
    snap = os.path.join(ROOT, "tests/snapshots/ws-4x4090-ulimit.json")

    def on_tty(env):
        master, slave = pty.openpty()
        p = subprocess.run([gpudoctor, "check", "--from", snap], stdout=slave, stderr=subprocess.PIPE,
                           env=env, timeout=60)
        os.close(slave)
        out = b""
        try:
            while True:
                chunk = os.read(master, 65536)
                if not chunk:
                    break
                out += chunk
        except OSError:  # EIO: the other side is closed
            pass
        os.close(master)
        return p.returncode, out.decode("utf-8", "replace")

    base = {k: v for k, v in ENV.items() if k != "NO_COLOR"}
    rc, out = on_tty(dict(base, TERM="xterm"))
    if "\x1b[1;31mFAIL\x1b[0m" not in out:
        fail("check on a terminal: no red FAIL (exit %d): %r" % (rc, out[:300]))
    for env in (dict(base, TERM="xterm", NO_COLOR="1"), dict(base, TERM="dumb")):
        if "\x1b[" in on_tty(env)[1]:
            fail("colour despite NO_COLOR or TERM=dumb")
    piped = subprocess.run([gpudoctor, "check", "--from", snap], capture_output=True, text=True,
                           env=dict(base, TERM="xterm"), timeout=60)
    if "\x1b[" in piped.stdout:
        fail("colour into a pipe")
    print("colour: on a terminal only, off with NO_COLOR and TERM=dumb")

    # explain reading a terminal says what it waits for; from a pipe it does not.
    master, slave = pty.openpty()
    p = subprocess.Popen([gpudoctor, "explain"], stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    os.close(slave)
    os.write(master, b"CUDA error: system not yet initialized\n\x04")
    out, err = p.communicate(timeout=60)
    os.close(master)
    if b"paste the error output" not in err or b"fabric-manager" not in out:
        fail("explain on a terminal: %r / %r" % (err[:200], out[:200]))
    piped = subprocess.run([gpudoctor, "explain"], input="x\n", capture_output=True, text=True,
                           env=ENV, timeout=60)
    if "paste" in piped.stderr:
        fail("explain prompts on a pipe: %r" % piped.stderr)

def main():
    gpudoctor = os.path.abspath(sys.argv[1])
    spec = json.loads(subprocess.run([gpudoctor, "__cli-spec"], capture_output=True, text=True,
                                     check=True).stdout)
    check_flags(spec)
    check_json(gpudoctor)
    check_typos(gpudoctor)
    check_colour(gpudoctor)
    check_generated(gpudoctor, spec)
    if failures:
        print("%d problem(s)" % len(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
