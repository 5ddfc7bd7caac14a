"""``python -m gpudoctor ...`` and the wheel's ``gpudoctor`` command: the
gpudoctor binary, run with these arguments.

The process is replaced by the binary (``os.execv``), so its exit code
(0 ok, 1 warn, 2 fail, 3 could not decide, 64 usage), its signals and its
terminal are the caller's, exactly as if the binary had been run itself.

Which binary, in order:

1. ``$GPUDOCTOR_EXE``, if set (an explicit choice, as for the library);
2. the one bundled in this package (the manylinux wheel): when the system's
   glibc is older than the one the wheel is tagged for, one line says so
   and the exit code is 3, instead of the dynamic loader's error;
3. the first ``gpudoctor`` binary on ``$PATH`` (the pure wheel, with
   gpudoctor installed apart). Only an ELF file counts: the command this
   wheel installs into a virtual environment's ``bin`` is itself a Python
   script named ``gpudoctor``, and running it would run this again.

With none of them: one line naming what was looked for, exit code 3.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional, Tuple

from . import _is_elf as is_elf

#: gpudoctor's exit code for "could not decide" (docs/check.md).
EXIT_CANNOT_ANSWER = 3

_HERE = os.path.dirname(os.path.abspath(__file__))


def elf_on_path(name: str) -> str:
    """The first ELF executable ``name`` in ``$PATH``'s absolute entries."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(d, name)
        if os.path.isabs(d) and is_elf(path):
            return path
    return ""


def bundled() -> Tuple[str, Optional[Tuple[int, int]], str]:
    """The binary in this package ("" if none: the pure wheel), the glibc
    version the wheel is tagged for and its platform tag."""
    path = os.path.join(_HERE, "gpudoctor")
    if not is_elf(path):
        return "", None, ""
    try:
        from . import _bundle  # written by setup.py when it bundles the binary
    except ImportError:
        return path, None, ""
    return path, tuple(_bundle.GLIBC_FLOOR), _bundle.PLATFORM


def glibc_version() -> Optional[Tuple[int, int]]:
    """This system's glibc version, None where the C library is not glibc."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.31"
    except (ValueError, OSError):
        return None
    name, _, number = text.partition(" ")
    parts = number.split(".")
    if name != "glibc" or len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])


def too_old(floor: Tuple[int, int], platform: str) -> str:
    """Why the bundled binary cannot run here ("" when it can)."""
    have = glibc_version()
    need = f"glibc {floor[0]}.{floor[1]} or newer ({platform})"
    if have is None:
        return (f"gpudoctor: the gpudoctor binary in this wheel needs {need}; this system's C "
                f"library is not glibc ({sys.platform}); install gpudoctor's binary for it and "
                f"set GPUDOCTOR_EXE to its path")
    if have < floor:
        return (f"gpudoctor: the gpudoctor binary in this wheel needs {need}; this system has "
                f"glibc {have[0]}.{have[1]}; install a gpudoctor built for it and set "
                f"GPUDOCTOR_EXE to its path")
    return ""


def choose() -> Tuple[str, str]:
    """The binary to run, or "" and the one-line reason there is none."""
    explicit = os.environ.get("GPUDOCTOR_EXE", "")
    if explicit:
        if is_elf(explicit):
            return explicit, ""
        return "", (f"gpudoctor: GPUDOCTOR_EXE={explicit} is not the gpudoctor binary (an "
                    f"executable ELF file)")
    path, floor, platform = bundled()
    if path:
        why = too_old(floor, platform) if floor else ""
        return ("", why) if why else (path, "")
    path = elf_on_path("gpudoctor")
    if path:
        return path, ""
    return "", (f"gpudoctor: no gpudoctor binary: none in {_HERE} (this wheel carries none), "
                f"none on PATH, GPUDOCTOR_EXE not set; install gpudoctor, or the manylinux "
                f"wheel, which bundles it")


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    exe, why = choose()
    if not exe:
        print(why, file=sys.stderr)
        return EXIT_CANNOT_ANSWER
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(exe, ["gpudoctor", *args])
    except OSError as e:  # execv returns only on failure
        print(f"gpudoctor: cannot run {exe}: {e.strerror}", file=sys.stderr)
    return EXIT_CANNOT_ANSWER


if __name__ == "__main__":
    sys.exit(main())
