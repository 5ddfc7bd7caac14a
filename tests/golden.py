"""Golden files shared by the test drivers (tests/e2e/run.py, tests/topo/run.py):
compare an output with <golden_dir>/<name>.<ext>, or rewrite it with --update."""
import difflib
import os


def compare(golden_dir, name, ext, actual, update, failures):
    """Appends a failure with the unified diff when `actual` differs from the
    golden file; with `update`, writes `actual` as the golden instead."""
    path = os.path.join(golden_dir, name + "." + ext)
    if update:
        os.makedirs(golden_dir, exist_ok=True)
        with open(path, "w") as f:
            f.write(actual)
        return
    try:
        with open(path) as f:
            expected = f.read()
    except FileNotFoundError:
        failures.append(f"{name}: no golden {path} (run with --update)")
        return
    if expected != actual:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{name}.{ext}", "actual"))
        failures.append(f"{name}: {ext} differs from golden:\n{diff}")
