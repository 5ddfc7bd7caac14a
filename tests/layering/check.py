#!/usr/bin/env python3
"""The folder order of src/ (DESIGN.md, "Layout"), checked from every #include.

Folders sit in layers; a file may include a header of its own folder or of any
folder in a lower layer, never one beside or above it. A helper needed by two
folders of one layer moves down. The build mirrors the same table (one library
per folder, CMakeLists.txt), so an edge this test allows the linker allows too.

    python3 tests/layering/check.py [src-dir]     # exit 1, with file:line, on a bad edge

It also reads cmake/folders.cmake: each gd_folder()'s DEPS must lie below it, and
every folder a file includes must be among its folder's DEPS or theirs.
"""
import os
import re
import sys

# Lowest first. `gpudoctor` is the public C header (include/gpudoctor/).
LAYERS = [
    ["util"],
    ["snapshot", "catalog", "config"],
    ["kernlog"],
    ["probe"],
    ["facts"],
    ["checks"],
    ["explain", "topo", "history", "fleet", "job"],
    ["report"],
    ["diag"],  # above report: its text report embeds the findings' text
    ["serve", "lib"],
    ["cli"],
]
EXTERNAL = {"gpudoctor"}
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')
FOLDER = re.compile(r"^gd_folder\((\w+)([^)]*)\)", re.M)


def layer_of():
    return {folder: i for i, layer in enumerate(LAYERS) for folder in layer}


def edges(src):
    """(from folder, to folder, file, line, header) for each cross-folder include."""
    for root, _, files in os.walk(src):
        for name in sorted(files):
            path = os.path.normpath(os.path.join(root, name))
            folder = os.path.relpath(path, src).split(os.sep)[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = m.group(1).split("/")[0]
                    if target != folder and target not in EXTERNAL:
                        yield folder, target, path, number, m.group(1)


def build_deps(cmake_file):
    """gd_folder name -> the folders its DEPS name, from cmake/folders.cmake."""
    with open(cmake_file, encoding="utf-8") as f:
        text = f.read()
    deps, excluded = {}, {}
    for m in FOLDER.finditer(text):
        words = m.group(2).split()
        listed, key = [], None
        for w in words:
            if w in ("DEPS", "LIBS", "EXCLUDE"):
                key = w
            elif key == "DEPS":
                listed.append(w)
            elif key == "EXCLUDE":
                excluded.setdefault(m.group(1), set()).add(w)
        deps[m.group(1)] = listed
    return deps, excluded


def reachable(deps, folder):
    seen, todo = set(), list(deps.get(folder, ()))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(deps.get(d, ()))
    return seen


def cycles(graph):
    """Folder cycles, each as a list of folders (Tarjan's strongly connected components)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "src")
    rank = layer_of()
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    bad = [f"{d}: a folder that has no layer in tests/layering/check.py" for d in folders if d not in rank]
    graph, files = {}, {}
    for a, b, path, number, header in edges(src):
        graph.setdefault(a, set()).add(b)
        files.setdefault((a, b), []).append(path)
        if a in rank and (b not in rank or rank[b] >= rank[a]):
            bad.append(f"{path}:{number}: {a} includes {header} ({b} is not below {a})")
    cmake_file = os.path.join(src, "..", "cmake", "folders.cmake")
    if os.path.exists(cmake_file):
        deps, excluded = build_deps(cmake_file)
        for a, listed in sorted(deps.items()):
            for b in listed:
                if a in rank and (b not in rank or rank[b] >= rank[a]):
                    bad.append(f"cmake/folders.cmake: gd_{a} links gd_{b} ({b} is not below {a})")
        for a, targets in sorted(graph.items()):
            if a not in deps:
                continue  # built on its own (lib/: cmake/libgpudoctor.cmake)
            for b in sorted(targets - reachable(deps, a)):
                # A file its folder's library leaves out is built elsewhere
                # (cli/serve.cc: into gpudoctor-serve, with gd_serve).
                if all(os.path.basename(p) in excluded.get(a, ()) for p in files[(a, b)]):
                    continue
                bad.append(f"cmake/folders.cmake: {a} includes {b}, which gd_{a} does not link")
    found = cycles(graph)
    for c in found:
        bad.append("cycle: " + " <-> ".join(c))
    for line in bad:
        print(line.replace(os.path.normpath(src) + os.sep, "src/"))
    print(f"layering: {len(folders)} folders, {sum(len(v) for v in graph.values())} folder edges, "
          f"{len(found)} cycles, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
