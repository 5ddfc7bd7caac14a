#!/usr/bin/env python3
"""Passes when a compile fails for the planted reason, and only then.

Usage: expect_compile_error.py MESSAGE COMPILER ARGS...

The ABI tests (tests/abi/*_abi_test.cc) plant a wrong signature under
-DGD_ABI_PLANT_MISMATCH. This runs the compiler on that and checks it stops
with the planted static_assert's MESSAGE: a compile that succeeds means the
check cannot see the mismatch, one that fails for another reason (a missing
header, a typo) proves nothing. The same command without the define must
compile, or the planted failure could hide a broken test file.
"""
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 64
    message, command = sys.argv[1], sys.argv[2:]
    clean = [a for a in command if a != "-DGD_ABI_PLANT_MISMATCH"]
    if clean == command:
        print("the command does not plant the mismatch (-DGD_ABI_PLANT_MISMATCH)", file=sys.stderr)
        return 64
    ok = subprocess.run(clean, capture_output=True, text=True)
    if ok.returncode != 0:
        print("FAIL: the file does not compile without the planted mismatch:\n" + ok.stderr)
        return 1
    planted = subprocess.run(command, capture_output=True, text=True)
    if planted.returncode == 0:
        print("FAIL: the planted mismatch compiled; the ABI check cannot see it")
        return 1
    if message not in planted.stderr:
        print(f"FAIL: the compile failed, but not with {message!r}:\n" + planted.stderr)
        return 1
    print(f"ok: the compiler rejects the planted mismatch ({message})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
