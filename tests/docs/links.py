#!/usr/bin/env python3
"""The product's docs stand alone: every link and path they give is in the repository.

Checks README.md, docs/*.md and deploy/**/README*:
  - every relative markdown link, [text](target) or [label]: target, names a file or
    directory of the repository, and its #anchor a heading of that file;
  - no link climbs out of the repository with ../ (a reader of a release has only the tree);
  - every inline code span that starts with a top-level directory of the repository
    (`docs/x.md`, `src/checks/`, `tests/logs/cases/*.log`) names something that exists.
Links to http(s) sources are left alone: vendor documentation is cited, not shipped.

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
    for f in failures:
        print(f)
    if failures:
        print(f"links.py: {len(failures)} broken link(s) or path(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
