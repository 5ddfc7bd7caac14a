"""gpudoctor for training scripts: is this machine fit for a GPU job, and why not.

Pure Python over libgpudoctor's C ABI (ctypes; see docs/library.md)::

    import gpudoctor

    gpudoctor.preflight()            # raises gpudoctor.Unhealthy, ranked causes first
    if gpudoctor.cuda_available():   # safe before fork: CUDA is not initialized here
        ...

Neither NVML nor CUDA is ever loaded into the calling process: the library
runs them in a short-lived child (the installed ``gpudoctor`` binary), killed
at its deadline. So a hanging driver cannot hang the script, a crashing one
cannot crash it, and the process is as fresh afterwards as before, which is
what ``fork``-based data loaders and ``multiprocessing`` need.

The library is found by ``$GPUDOCTOR_LIB``, else next to this package, else
where ``cmake --install`` put it relative to this package, else beside the
``gpudoctor`` binary (``$GPUDOCTOR_EXE``, else the first on ``$PATH``): in its
directory (a build tree) or its prefix's ``lib/<multiarch>``, ``lib64`` or
``lib``; else by the system loader (``libgpudoctor.so.0``). The library then
finds the binary itself, beside it first (``$GPUDOCTOR_EXE`` overrides). So
the manylinux wheel, which carries both in this package, needs nothing
installed, and the pure wheel only gpudoctor's ``bin`` directory on
``$PATH``. ``python -m gpudoctor`` runs the binary (__main__.py).

Every function may be called from any thread; the GIL is released while the
library works.
"""
from __future__ import annotations

import ctypes
import json
import os
import sysconfig
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__all__ = [
    "ABI_VERSION",
    "Cause",
    "GpudoctorError",
    "Unhealthy",
    "cuda_available",
    "cuda_status",
    "library_path",
    "preflight",
    "version",
]

#: The C ABI this module speaks (GPUDOCTOR_ABI_VERSION, the library's SOVERSION).
ABI_VERSION = 0

# Return codes of the C functions (include/gpudoctor/gpudoctor.h).
_OK, _WARN, _FAIL, _INTERNAL, _USAGE = 0, 1, 2, 3, 64

PathLike = Union[str, "os.PathLike[str]"]


class GpudoctorError(RuntimeError):
    """gpudoctor could not answer: the library or the ``gpudoctor`` binary was
    not found, or failed in a way that is its own fault (exit code 3)."""


@dataclass(frozen=True)
class Cause:
    """One finding that makes the machine unfit, as ``gpudoctor check`` ranks it."""

    id: str  #: stable finding id, ``"memory.address-space-limit"``
    severity: str  #: ``"fail"`` (or ``"warn"`` under ``strict=True``)
    summary: str  #: one line
    gpus: Tuple[str, ...] = ()  #: PCI bus ids concerned
    evidence: Tuple[str, ...] = ()  #: the values or log lines that prove it
    remedy: Tuple[str, ...] = ()  #: commands or steps, in order
    follows_from: str = ""  #: id of the root cause this one is a consequence of

    @classmethod
    def from_finding(cls, f: Dict[str, Any]) -> "Cause":
        return cls(id=f.get("id", ""), severity=f.get("severity", ""),
                   summary=f.get("summary", ""), gpus=tuple(f.get("gpus", ())),
                   evidence=tuple(f.get("evidence", ())), remedy=tuple(f.get("remedy", ())),
                   follows_from=f.get("follows_from", "") or "")


class Unhealthy(RuntimeError):
    """The machine is unfit for a GPU job.

    Attributes:
        report: the whole ``gpudoctor.report/v1`` report, as a dict.
        causes: the failing findings (with ``strict=True`` also the warnings),
            most likely root cause first.
        verdict: ``"fail"``, or ``"warn"`` under ``strict=True``.
    """

    def __init__(self, report: Dict[str, Any], causes: List[Cause]):
        self.report = report
        self.causes = causes
        self.verdict: str = report.get("verdict", "")
        lines = [f"gpudoctor: this machine is not fit for a GPU job (verdict {self.verdict})"]
        for i, c in enumerate(causes, 1):
            gpus = f" [{', '.join(c.gpus)}]" if c.gpus else ""
            lines.append(f"  {i}. {c.id}{gpus}: {c.summary}")
            if c.remedy:
                lines.append(f"     fix: {c.remedy[0]}")
        super().__init__("\n".join(lines))

    @property
    def ids(self) -> List[str]:
        """The causes' finding ids, in rank order."""
        return [c.id for c in self.causes]


# --- loading the library ----------------------------------------------------

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path = ""


def _is_elf(path: str) -> bool:
    """An executable ELF file: the gpudoctor binary, not a script named so."""
    try:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _on_path(name: str) -> str:
    """The first executable ELF file ``name`` in ``$PATH``'s absolute entries
    (as the library searches: never one in the current directory). A script
    does not count: the ``gpudoctor`` command this wheel installs into a
    virtual environment's ``bin`` is one, and comes first on PATH there."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(d, name)
        if os.path.isabs(d) and _is_elf(path):
            return path
    return ""


def _lib_dirs() -> Tuple[List[str], str]:
    """The directories to look in for the library, in order, and the
    ``gpudoctor`` binary they were partly derived from ("" if none)."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here]
    try:
        from . import _layout  # written by cmake/libgpudoctor.cmake at install

        dirs.append(os.path.normpath(os.path.join(here, _layout.LIBDIR_FROM_PACKAGE)))
    except ImportError:
        pass
    exe = os.environ.get("GPUDOCTOR_EXE", "") or _on_path("gpudoctor")
    if exe:
        multiarch = sysconfig.get_config_var("MULTIARCH") or ""
        subdirs = ([os.path.join("lib", multiarch)] if multiarch else []) + ["lib64", "lib"]
        # As named and as resolved: ~/bin/gpudoctor may link to /opt/gpudoctor/bin.
        for path in (os.path.abspath(exe), os.path.realpath(exe)):
            bindir = os.path.dirname(path)
            dirs.append(bindir)  # the build tree: both in one directory
            dirs.extend(os.path.join(os.path.dirname(bindir), sub) for sub in subdirs)
    return list(dict.fromkeys(dirs)), exe


def _load() -> ctypes.CDLL:
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        soname = f"libgpudoctor.so.{ABI_VERSION}"
        explicit = os.environ.get("GPUDOCTOR_LIB", "")
        if explicit:
            tries = [explicit]  # an explicit choice is never second-guessed
        else:
            dirs, exe = _lib_dirs()
            tries = [p for p in (os.path.join(d, soname) for d in dirs) if os.path.exists(p)]
            tries.append(soname)  # the system loader
        errors = []
        for path in tries:
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                errors.append(str(e))
        else:
            # One line that names every place looked in.
            if explicit:
                raise GpudoctorError(f"cannot load libgpudoctor: GPUDOCTOR_LIB={explicit}: "
                                     + "; ".join(errors))
            beside = "" if exe else ("; no gpudoctor binary on PATH (nor GPUDOCTOR_EXE) "
                                     "to look beside")
            raise GpudoctorError(
                f"cannot load libgpudoctor: looked for {soname} in {', '.join(dirs)}{beside}, "
                f"then asked the system loader: {'; '.join(errors)}; put gpudoctor's bin "
                f"directory on PATH, or set GPUDOCTOR_LIB to the library's path")
        lib.gpudoctor_abi_version.restype = ctypes.c_int
        lib.gpudoctor_abi_version.argtypes = []
        abi = lib.gpudoctor_abi_version()
        if abi != ABI_VERSION:
            raise GpudoctorError(f"{path}: C ABI {abi}, this module speaks {ABI_VERSION}")
        lib.gpudoctor_version.restype = ctypes.c_char_p
        lib.gpudoctor_version.argtypes = []
        for name in ("gpudoctor_preflight", "gpudoctor_cuda_available"):
            fn = getattr(lib, name)
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.gpudoctor_free.restype = None
        lib.gpudoctor_free.argtypes = [ctypes.c_void_p]
        _lib = lib
        _lib_path = _loaded_path(lib, path)
        return lib


def _loaded_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the loader actually mapped (a soname resolves somewhere)."""
    try:
        addr = ctypes.cast(lib.gpudoctor_version, ctypes.c_void_p).value or 0
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split()
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if lo <= addr < hi and len(parts) >= 6:
                    return parts[5]
    except (OSError, ValueError):
        pass
    return fallback


def _call(function: str, options: Dict[str, Any]) -> Tuple[int, Dict[str, Any]]:
    lib = _load()
    try:
        request = json.dumps({k: _plain(v) for k, v in options.items() if v is not None})
    except (TypeError, ValueError) as e:
        raise ValueError(f"gpudoctor: options: {e}") from None
    out = ctypes.c_void_p()
    rc = getattr(lib, function)(request.encode(), ctypes.byref(out))
    try:
        text = ctypes.string_at(out.value).decode("utf-8", "replace") if out.value else ""
    finally:
        lib.gpudoctor_free(out)
    try:
        doc = json.loads(text) if text else {}
    except json.JSONDecodeError as e:
        raise GpudoctorError(f"libgpudoctor answered code {rc} with bad JSON: {e}") from None
    if rc == _USAGE:
        raise ValueError("gpudoctor: " + doc.get("error", "bad options"))
    if rc not in (_OK, _WARN, _FAIL):
        raise GpudoctorError("gpudoctor: " + doc.get("error", f"code {rc}"))
    return rc, doc


def _plain(value: Any) -> Any:
    """Paths as strings, tuples and sets as lists: what JSON can carry."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return value


# --- the API ------------------------------------------------------------------


def version() -> str:
    """The version of the loaded libgpudoctor, ``"0.1.0"``."""
    return _load().gpudoctor_version().decode()


def library_path() -> str:
    """The libgpudoctor file this module loaded."""
    _load()
    return _lib_path


def preflight(*, strict: bool = False, root: Optional[PathLike] = None,
              config: Optional[PathLike] = None,
              only: Optional[Union[str, Sequence[str]]] = None,
              skip: Optional[Union[str, Sequence[str]]] = None,
              deadline_s: Optional[float] = None,
              log_window: Optional[Union[str, float]] = None,
              nvml_lib: Optional[PathLike] = None, cuda_lib: Optional[PathLike] = None,
              cudart_lib: Optional[PathLike] = None, **extra: Any) -> Dict[str, Any]:
    """Runs every gpudoctor probe and check, as ``gpudoctor check --json`` does.

    Call it before the framework initializes CUDA (before ``import torch`` has
    touched a GPU): it never initializes CUDA in this process itself.

    Args:
        strict: also raise on a warning verdict (e.g. CUDA's device order
            differs from nvidia-smi's, persistence mode off, a GPU throttling).
        root: read /proc, /sys, /dev and /run under this directory ("/").
        config: health-threshold config file (docs/config.md).
        only, skip: check names, finding ids or areas, as a list or one
            comma-separated string.
        deadline_s: seconds NVML and CUDA may take before they count as hung
            (10; 0.1 to 600).
        log_window: kernel-log events older than this ("2h", "30m", or
            seconds) no longer fail the node.
        nvml_lib, cuda_lib, cudart_lib: the libraries to probe (default: the
            ones a CUDA program would load).
        **extra: options of a newer library, passed as they are.

    Returns:
        The ``gpudoctor.report/v1`` report: ``verdict`` (``"ok"``,
        ``"info"``, ``"warn"``, ``"fail"``), ``findings`` (most likely root
        cause first), ``gpus``, ``probes``.

    Raises:
        Unhealthy: the verdict is ``"fail"`` (or ``"warn"`` with
            ``strict=True``); ``.causes`` are the ranked findings, ``.report``
            the whole report.
        ValueError: an unknown option or a bad value.
        GpudoctorError: gpudoctor could not answer (library or binary missing).
    """
    options = dict(extra, root=root, config=config, only=only, skip=skip, deadline_s=deadline_s,
                   log_window=log_window, nvml_lib=nvml_lib, cuda_lib=cuda_lib,
                   cudart_lib=cudart_lib)
    _, report = _call("gpudoctor_preflight", options)
    bad = ("fail", "warn") if strict else ("fail",)
    if report.get("verdict") in bad:
        causes = [Cause.from_finding(f) for f in report.get("findings", [])
                  if f.get("severity") in bad]
        raise Unhealthy(report, causes)
    return report


def cuda_status(*, deadline_s: Optional[float] = None, cuda_lib: Optional[PathLike] = None,
                cudart_lib: Optional[PathLike] = None, **extra: Any) -> Dict[str, Any]:
    """What CUDA would say in a process with this one's environment.

    ``cuInit``, ``cuDeviceGetCount`` and (where a libcudart is found)
    ``cudaGetDeviceCount`` run in a child process under ``deadline_s``
    (default 10); CUDA is not initialized here, so this is safe before
    ``fork``. A hanging driver gives ``available: False`` at the deadline.

    Returns:
        ``{"available": bool, "device_count": int, "init_rc": int,
        "init_error": str, "driver_version": int, "library": str,
        "cudart": str, "cudart_rc": int, "cudart_error": str,
        "cudart_device_count": int, "error": str, "duration_ms": float}``;
        ``error`` says why CUDA is not available (one line), ``""`` when it is.

    Raises:
        ValueError: an unknown option or a bad value.
        GpudoctorError: gpudoctor could not answer.
    """
    options = dict(extra, deadline_s=deadline_s, cuda_lib=cuda_lib, cudart_lib=cudart_lib)
    _, status = _call("gpudoctor_cuda_available", options)
    return status


def cuda_available(*, deadline_s: Optional[float] = None, cuda_lib: Optional[PathLike] = None,
                   cudart_lib: Optional[PathLike] = None, **extra: Any) -> bool:
    """``torch.cuda.is_available()``'s answer, without initializing CUDA here.

    True when CUDA starts and sees at least one device in a process with
    this one's environment (``CUDA_VISIBLE_DEVICES``, limits, libraries).
    Safe before ``fork``: the question is asked in a child process. See
    :func:`cuda_status` for the details and the arguments.
    """
    return bool(cuda_status(deadline_s=deadline_s, cuda_lib=cuda_lib, cudart_lib=cudart_lib,
                            **extra)["available"])
