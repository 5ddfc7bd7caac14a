#!/usr/bin/env python3
"""The product's docs stand alone: every link and path they give is in the repository.

Checks README.md, docs/*.md and deploy/**/README*:
  - every relative markdown link, [text](target) or [label]: target, names a file or
    directory of the repository, and its #anchor a heading of that file;
  - no link climbs out of the repository with ../ (a reader of a release has only the tree);
  - every inline code span that starts with a top-level directory of the repository
    (`docs/x.md`, `src/checks/`, `tests/logs/cases/*.log`) names something that exists.
Links to http(s) sources are left alone: vendor documentation is cited, not shipped.

And the code's citations of docs/nvidia-facts.md stand: in every file under src/, tests/,
bench/, gpu/, fuzz/, docs/, scripts/ and python/ that cites the facts (names nvidia-facts, or
writes "facts §N" or "fact sheet §N"), every §N, also in lists and ranges such as
"§3, §4.1 and §10", "§7.2/§8" or "§4.3-§4.5" and on the lines that follow, is a section of
docs/nvidia-facts.md: a heading there starts with "N " or "N." ("### 4.5 Clock event ...").
Such a file writes "section N", not "§N", for any other document.

usage: links.py            (run from anywhere; exit 1 naming file:line on a failure)
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:
# Where a path stops being literal: a glob, a placeholder (<check>), an ellipsis.
PLACEHOLDER = re.compile(r"[<{]|\.\.\.|…")

FACTS = os.path.join(ROOT, "docs", "nvidia-facts.md")
CITING_DIRS = ("src", "tests", "bench", "gpu", "fuzz", "docs", "scripts", "python")
CITES_FACTS = re.compile(r"nvidia-facts|\bfacts? (?:sheet )?§")
SECTION_REF = re.compile(r"§\s?(\d+(?:\.\d+)*)")
SECTION_HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)[. ]")


def doc_files():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "deploy", "**", "README*"), recursive=True))
    return [f for f in files if os.path.isfile(f)]


def top_dirs():
    # Top-level directories that are part of the tree; build outputs are not.
    return {d for d in os.listdir(ROOT)
            if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith((".", "build"))}


def prose_lines(path):
    """(line number, text) outside fenced code blocks: links there are not links."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s*(```+|~~~+)", line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, line


def slug(heading):
    # GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'.
    text = re.sub(r"`|\*\*|__", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    seen, result = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
    return result


def inside_repo(path):
    return os.path.commonpath([ROOT, os.path.realpath(path)]) == os.path.realpath(ROOT)


def check_link(doc, target):
    """None when fine, else why not."""
    if EXTERNAL.match(target):
        return None
    file_part, _, anchor = target.partition("#")
    dest = doc if not file_part else os.path.normpath(
        os.path.join(os.path.dirname(doc), file_part))
    if not inside_repo(dest):
        return f"link {target} leaves the repository"
    if not os.path.exists(dest):
        return f"link {target}: no such file in the repository"
    if anchor and dest.endswith(".md") and anchor not in anchors(dest):
        return f"link {target}: {os.path.relpath(dest, ROOT)} has no heading #{anchor}"
    return None


def check_path(token):
    """A repository path given in backticks: a literal path, a glob, or a prefix."""
    if "*" in token or "?" in token:
        return None if glob.glob(os.path.join(ROOT, token)) else f"`{token}` matches nothing"
    cut = PLACEHOLDER.search(token)
    literal = token[:cut.start()] if cut else token
    literal = literal.rstrip(".,;:")
    if cut:
        literal = os.path.dirname(literal)  # the directory before the placeholder
    if not os.path.exists(os.path.join(ROOT, literal)):
        return f"`{token}`: no such path in the repository"
    return None


def fact_sections():
    """The section numbers of docs/nvidia-facts.md's headings: {"1.3", "4", "4.5", ...}."""
    return {m.group(1) for _, line in prose_lines(FACTS)
            for m in [SECTION_HEADING.match(line)] if m}


def citing_files():
    for top in CITING_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue  # tests/roots has links into fake sysfs trees
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if CITES_FACTS.search(text):
                    yield path, text


def missing_sections():
    """file:line of every §N cited in a file that cites the facts with no such section."""
    sections = fact_sections()
    for path, text in citing_files():
        rel = os.path.relpath(path, ROOT)
        for n, line in enumerate(text.splitlines(), 1):
            for number in SECTION_REF.findall(line):
                if number not in sections:
                    yield f"{rel}:{n}: §{number}: docs/nvidia-facts.md has no section {number}"


def main():
    dirs = top_dirs()
    failures = []
    for doc in doc_files():
        rel = os.path.relpath(doc, ROOT)
        for n, line in prose_lines(doc):
            targets = INLINE_LINK.findall(line)
            m = REFERENCE_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                why = check_link(doc, target)
                if why:
                    failures.append(f"{rel}:{n}: {why}")
            for _, span in CODE_SPAN.findall(line):
                token = span.strip().split(" ")[0]
                if token.startswith("../"):
                    failures.append(f"{rel}:{n}: `{span}` points outside the repository")
                elif "/" in token and token.split("/")[0] in dirs:
                    why = check_path(token)
                    if why:
                        failures.append(f"{rel}:{n}: {why}")
    failures += missing_sections()
    for f in failures:
        print(f)
    if failures:
        print(f"links.py: {len(failures)} broken link(s), path(s) or section citation(s)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
