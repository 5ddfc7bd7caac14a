"""The test loop the end-to-end drivers share (tests/run/run_test.py,
tests/serve/serve_test.py, tests/diag/run.py, tests/gpu/helper_test.py).

Every test_* function of the driver runs in name order; `-k NAME` keeps
those whose name contains NAME. A test raising Skip is skipped; any other
exception fails it with its traceback, and the rest still run.
"""
import tempfile
import time
import traceback


class Skip(Exception):
    pass


def take_k(args):
    """Removes `-k NAME` from args (a list); returns NAME, or None."""
    if "-k" not in args:
        return None
    i = args.index("-k")
    only = args[i + 1] if i + 1 < len(args) else ""
    del args[i:i + 2]
    return only


def run_tests(namespace, only=None, tmp_prefix=None, none_ran=0):
    """Runs the test_* callables of namespace (a driver's globals()). With
    tmp_prefix, each gets a fresh temporary directory as its argument.
    Returns the exit code: 1 when a test failed, none_ran when every test
    was skipped or filtered out, else 0."""
    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_") and callable(f)]
    failed, ran = [], 0
    for name, fn in tests:
        if only is not None and only not in name:
            continue
        start = time.monotonic()
        try:
            if tmp_prefix is None:
                fn()
            else:
                with tempfile.TemporaryDirectory(prefix=tmp_prefix) as tmp:
                    fn(tmp)
            ran += 1
            print(f"ok    {name} ({time.monotonic() - start:.1f} s)", flush=True)
        except Skip as why:
            print(f"skip  {name}: {why}", flush=True)
        except Exception:  # noqa: BLE001 - report every failing test, then exit 1
            failed.append(name)
            ran += 1
            print(f"FAIL  {name}\n{traceback.format_exc()}", flush=True)
    print(f"{len(failed)} failed" if failed else "all passed")
    if failed:
        return 1
    return 0 if ran else none_ran
