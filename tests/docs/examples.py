#!/usr/bin/env python3
"""The examples in the docs are what gpudoctor prints.

In README.md, docs/*.md and deploy/**/README*, a fenced block whose info string is `console`
holds command lines that start with `$ `, each followed by its expected output (up to the next
`$ ` line or the end of the block):

    ```console
    $ gpudoctor topo --from tests/docs/snapshots/ws-4x4090.json
    4 GPUs (from NVML)
    ...
    ```

Each command runs through /bin/sh from the repository root (so globs, pipes and `<` work),
with `gpudoctor` replaced by the binary under test, and its standard output and standard error
together must equal the block's text. Only commands that work offline on files in the
repository belong in such blocks; a command that needs a live machine goes in a `sh` block
without output.

usage: examples.py GPUDOCTOR [--update]
  --update rewrites each console block with what the commands print now (review the diff).
Exit 1 naming file:line and the difference when an example no longer matches.
"""
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FENCE = re.compile(r"^(\s*)(```+)\s*(\S*)\s*$")
# The command word `gpudoctor`, not gpudoctor.io/..., gpudoctor-diag or a path ending in it.
COMMAND_WORD = re.compile(r"(?<![\w/.-])gpudoctor(?![\w/.-])")
TIMEOUT_S = 60


def doc_files():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "deploy", "**", "README*"), recursive=True))
    return [f for f in files if os.path.isfile(f)]


def console_blocks(lines):
    """(indent, first content line index, end index) of each ```console block."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, info = m.groups()
        end = i + 1
        while end < len(lines) and not (lines[end].strip().startswith(ticks)
                                        and not lines[end].strip().strip("`")):
            end += 1
        if info == "console":
            yield indent, i + 1, end
        i = end + 1


def examples(lines, indent, start, end):
    """(line index of the command, command, expected output lines) in one block."""
    body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start:end]]
    current = None
    for k, line in enumerate(body):
        if line.startswith("$ "):
            if current:
                yield current
            current = (start + k, line[2:], [])
        elif current is None:
            raise ValueError(f"line {start + k + 1}: a console block starts with a `$ ` command")
        else:
            current[2].append(line)
    if current:
        yield current


def environment():
    # The same answer on every machine: no locale, colour or time zone of the caller, and none
    # of the variables gpudoctor reads about GPUs and jobs (they would change `env`'s answer).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA_", "NVIDIA_", "GPUDOCTOR_", "PYTORCH_", "SLURM", "LC_"))}
    env.update({"LC_ALL": "C", "NO_COLOR": "1", "TZ": "UTC"})
    return env


def run(gd, command):
    line = COMMAND_WORD.sub(shlex.quote(gd), command)
    p = subprocess.run(["/bin/sh", "-c", line], cwd=ROOT, env=environment(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    # Markdown keeps no trailing blanks, so neither does the comparison.
    out = [l.rstrip() for l in p.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")]
    return p.returncode, ([] if out == [""] else out)


def check_file(gd, path, update, failures):
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    replacements = []  # (start, end, new lines), applied bottom-up
    for indent, start, end in console_blocks(lines):
        try:
            found = list(examples(lines, indent, start, end))
        except ValueError as e:
            failures.append(f"{rel}:{e}")
            continue
        new_body = []
        for at, command, expected in found:
            rc, actual = run(gd, command)
            where = f"{rel}:{at + 1}: $ {command}"
            # gpudoctor's own exit codes are below 100; 126, 127 and 128+N are the shell's
            # "cannot run", "not found" and signals: never a valid example.
            if rc >= 100:
                failures.append(f"{where}: exit {rc}: " + " / ".join(actual[-3:]))
                new_body += ["$ " + command] + expected  # --update keeps what was there
                continue
            if update:
                if run(gd, command)[1] != actual:
                    failures.append(f"{where}: output differs from run to run (times?); "
                                    "pick an input whose output is stable")
                new_body += ["$ " + command] + actual
            elif [l.rstrip() for l in expected] != actual:
                diff = difflib.unified_diff(expected, actual, "docs", "gpudoctor", lineterm="")
                failures.append(where + "\n" + "\n".join("    " + d for d in diff))
        if update:
            replacements.append((start, end, [indent + l if l else l for l in new_body]))
    if update and replacements:
        before = list(lines)
        for start, end, body in reversed(replacements):
            lines[start:end] = body
        if lines != before:  # leave files whose examples still hold untouched
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))


def main(argv):
    args = [a for a in argv[1:] if a != "--update"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    gd = os.path.abspath(args[0])
    update = "--update" in argv
    failures = []
    for path in doc_files():
        check_file(gd, path, update, failures)
    for f in failures:
        print(f)
    if failures:
        print(f"examples.py: {len(failures)} example(s) do not match", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
