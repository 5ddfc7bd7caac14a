"""The Python module (python/gpudoctor) over the real libgpudoctor and the real
gpudoctor binary, against the fake NVML/CUDA libraries (build/fakes) and the
recorded machine trees (tests/roots), staged as tests/e2e/run.py stages them.

Run by ctest (test python_module, cmake/libgpudoctor.cmake), which sets
GPUDOCTOR_LIB (the built library), GD_FAKES_DIR, GD_SOURCE_DIR and
PYTHONPATH. By hand:

    GPUDOCTOR_LIB=build/libgpudoctor.so.0 GD_FAKES_DIR=build/fakes \\
        PYTHONPATH=python python3 -m pytest -q tests/python
"""
import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time

import pytest

import gpudoctor

SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
FAKES = os.environ.get("GD_FAKES_DIR") or os.path.join(SRC, "build", "fakes")
CUDA_LIBS = {"cuda_lib": os.path.join(FAKES, "libcuda.so.1"),
             "cudart_lib": os.path.join(FAKES, "libcudart.so.13")}
ALL_LIBS = dict(CUDA_LIBS, nvml_lib=os.path.join(FAKES, "libnvidia-ml.so.1"))
# What must never be mapped into this process: any CUDA or NVML library,
# real or fake.
DRIVER_LIBS = ("libcuda.so", "libcudart.so", "libnvidia-ml.so")


def root(name):
    return os.path.join(SRC, "tests", "roots", name)


@pytest.fixture
def fake(monkeypatch):
    """Selects the fake scenario tests/fakes/scenarios/<name>.json."""
    def use(name):
        monkeypatch.setenv("GPUDOCTOR_FAKE_SCENARIO",
                           os.path.join(SRC, "tests", "fakes", "scenarios", name + ".json"))
    return use


@contextlib.contextmanager
def address_space_limit(kib):
    """ulimit -v for this process (inherited by the probe children), soft
    limit only, so it can be lifted again."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def driver_mappings(maps_text):
    return [line for line in maps_text.splitlines()
            if any(lib in line for lib in DRIVER_LIBS) or FAKES in line]


def own_driver_mappings():
    with open("/proc/self/maps") as f:
        return driver_mappings(f.read())


# --- the library itself ---------------------------------------------------------


def test_version_and_library():
    assert gpudoctor.version().count(".") == 2
    assert os.path.realpath(gpudoctor.library_path()) == \
        os.path.realpath(os.environ["GPUDOCTOR_LIB"])


# --- preflight --------------------------------------------------------------------


def test_preflight_healthy_returns_the_report(fake):
    fake("ws-4x4090")
    report = gpudoctor.preflight(root=root("ws-4x4090"), **ALL_LIBS)
    assert report["schema"] == "gpudoctor.report/v1"
    # Healthy; CUDA's default order differs from nvidia-smi's, a note.
    assert report["verdict"] == "ok"
    assert report["findings"][0]["id"] == "device-order.mismatch"
    assert report["findings"][0]["severity"] == "info"
    assert len(report["gpus"]) == 4
    assert {p["name"] for p in report["probes"]} >= {"nvml", "cuda"}


def test_preflight_strict_raises_on_a_warning(fake, monkeypatch):
    fake("ws-4x4090")
    # GPUs picked by index while the orders differ: a warning.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    with pytest.raises(gpudoctor.Unhealthy) as e:
        gpudoctor.preflight(strict=True, root=root("ws-4x4090"), **ALL_LIBS)
    assert e.value.verdict == "warn"
    assert e.value.ids[0] == "device-order.mismatch"
    assert all(c.severity in ("warn", "fail") for c in e.value.causes)


def test_preflight_raises_with_ranked_causes_under_ulimit(fake):
    # The classic field report: ulimit -v 32 GiB, cuInit fails out of memory.
    fake("ws-4x4090-ulimit")
    with address_space_limit(33554432), pytest.raises(gpudoctor.Unhealthy) as e:
        gpudoctor.preflight(root=root("ws-4x4090-ulimit"), **ALL_LIBS)
    err = e.value
    assert err.verdict == "fail" and err.report["verdict"] == "fail"
    assert err.ids[0] == "memory.address-space-limit"  # the root cause first
    assert "cuda.init-failed" in err.ids
    assert all(c.severity == "fail" for c in err.causes)
    assert err.causes[0].summary and err.causes[0].remedy
    assert err.ids == [f["id"] for f in err.report["findings"] if f["severity"] == "fail"]
    text = str(err)
    assert "1. memory.address-space-limit" in text and "fix: " in text


def test_preflight_gpu_lost(fake):
    fake("gpu-lost")
    with pytest.raises(gpudoctor.Unhealthy) as e:
        gpudoctor.preflight(root=root("ws-4x4090"), **ALL_LIBS)
    assert e.value.ids[0] == "gpu.fallen-off-bus"
    assert e.value.causes[0].gpus == ("0000:61:00.0",)


def test_preflight_only_and_skip(fake):
    fake("ws-4x4090")
    report = gpudoctor.preflight(root=root("ws-4x4090"), skip=["device-order"], **ALL_LIBS)
    assert all(f["id"] != "device-order.mismatch" for f in report["findings"])
    report = gpudoctor.preflight(root=root("ws-4x4090"), only="devnodes,uvm", **ALL_LIBS)
    assert report["findings"]
    assert all(f["id"].split(".")[0] in ("devnodes", "uvm") for f in report["findings"])


def test_preflight_hang_returns_within_the_deadline(fake):
    fake("cuda-hang")
    start = time.monotonic()
    with pytest.raises(gpudoctor.Unhealthy) as e:
        gpudoctor.preflight(root=root("ws-4x4090"), deadline_s=1.0, **ALL_LIBS)
    assert time.monotonic() - start < 2.5
    assert e.value.ids[0] == "cuda.init-hang"


# --- cuda_available -----------------------------------------------------------------


def test_cuda_available_on_a_healthy_machine(fake):
    fake("ws-4x4090")
    assert gpudoctor.cuda_available(**CUDA_LIBS) is True
    status = gpudoctor.cuda_status(**CUDA_LIBS)
    assert status["available"] is True and status["error"] == ""
    assert status["device_count"] == 4 and status["cudart_device_count"] == 4
    assert status["init_rc"] == 0 and status["cudart_rc"] == 0
    assert os.path.realpath(status["library"]) == os.path.realpath(CUDA_LIBS["cuda_lib"])


def test_cuda_available_follows_this_process_environment(fake, monkeypatch):
    fake("ws-4x4090")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # hides every GPU, as for torch
    status = gpudoctor.cuda_status(**CUDA_LIBS)
    assert status["available"] is False and status["device_count"] == 0
    assert "no devices" in status["error"] or "NO_DEVICE" in status["error"]


def test_cuda_not_available_under_ulimit(fake):
    fake("ws-4x4090-ulimit")
    with address_space_limit(33554432):
        assert gpudoctor.cuda_available(**CUDA_LIBS) is False
        status = gpudoctor.cuda_status(**CUDA_LIBS)
    assert status["init_rc"] == 2
    assert "CUDA_ERROR_OUT_OF_MEMORY" in status["init_error"]
    assert status["error"].startswith("cuInit returned CUDA_ERROR_OUT_OF_MEMORY")
    # Lifted again: the same question now says yes.
    assert gpudoctor.cuda_available(**CUDA_LIBS) is True


def test_cuda_not_available_without_devices(fake):
    fake("no-devices")
    assert gpudoctor.cuda_available(**CUDA_LIBS) is False


def test_cuda_available_hang_returns_within_the_deadline(fake):
    fake("cuda-hang")
    start = time.monotonic()
    status = gpudoctor.cuda_status(deadline_s=0.5, **CUDA_LIBS)
    elapsed = time.monotonic() - start
    assert elapsed < 1.5, elapsed
    assert status["available"] is False
    assert "timeout" in status["error"] and "cuInit" in status["error"]


def test_cuda_crash_does_not_crash_the_caller(fake):
    # cuInit raises SIGSEGV in the fake: had it run here, pytest would be dead.
    fake("cuda-crash")
    status = gpudoctor.cuda_status(**CUDA_LIBS)
    assert status["available"] is False
    assert "crashed: SIGSEGV" in status["error"]


def test_cuda_missing_library():
    status = gpudoctor.cuda_status(cuda_lib="/nonexistent/libcuda.so.1")
    assert status["available"] is False and "/nonexistent/libcuda.so.1" in status["error"]


# --- CUDA is never initialized in this process -----------------------------------------


def test_no_driver_library_is_ever_mapped_here(fake):
    assert own_driver_mappings() == []
    for scenario in ("ws-4x4090", "cuda-crash"):
        fake(scenario)
        gpudoctor.cuda_available(**CUDA_LIBS)
        gpudoctor.cuda_status()  # the system's libcuda.so.1, if any
    fake("ws-4x4090")
    gpudoctor.preflight(root=root("ws-4x4090"), **ALL_LIBS)
    assert own_driver_mappings() == []


def test_the_mapping_check_can_fail():
    # The detector above, in a process that does load the fake libcuda.
    code = ("import ctypes, sys; ctypes.CDLL(sys.argv[1]); "
            "sys.stdout.write(open('/proc/self/maps').read())")
    maps = subprocess.run([sys.executable, "-c", code, CUDA_LIBS["cuda_lib"]],
                          capture_output=True, text=True, check=True).stdout
    assert driver_mappings(maps)


def test_safe_before_fork(fake):
    # cuda_available() then fork: the child may still use CUDA (here: ask again).
    fake("ws-4x4090")
    assert gpudoctor.cuda_available(**CUDA_LIBS)
    pid = os.fork()
    if pid == 0:
        try:
            ok = gpudoctor.cuda_available(**CUDA_LIBS) and own_driver_mappings() == []
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# --- options and errors -----------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"bogus": 1}, "unknown key 'bogus'"),
    ({"deadline_s": 0}, "deadline_s"),
    ({"deadline_s": "soon"}, "deadline_s"),
    ({"root": "/nonexistent"}, "not a directory"),
    ({"only": ["no-such-check"]}, "no-such-check"),
    ({"skip": 5}, "skip"),
    ({"log_window": "forever"}, "log_window"),
    ({"cuda_lib": 3}, "cuda_lib"),
    ({"config": object()}, "options"),
])
def test_bad_preflight_options(options, message):
    with pytest.raises(ValueError, match=message):
        gpudoctor.preflight(**options)


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp, "Is a directory"),
    (lambda tmp: "/dev/zero", "over the 1 MiB limit"),
    (lambda tmp: tmp / "missing.toml", "No such file or directory"),
])
def test_hostile_config_is_a_value_error(tmp_path, monkeypatch, make, message):
    # The config is read capped, by config= and by $GPUDOCTOR_CONFIG, before
    # anything is probed (issue 20).
    path = str(make(tmp_path))
    with pytest.raises(ValueError, match=message):
        gpudoctor.preflight(root=root("ws-4x4090"), config=path)
    monkeypatch.setenv("GPUDOCTOR_CONFIG", path)
    with pytest.raises(ValueError, match=message):
        gpudoctor.preflight(root=root("ws-4x4090"))


def test_deep_config_key_is_a_value_error(tmp_path, monkeypatch):
    # 100,000 dotted parts overflowed toml++'s stack; refused before it parses.
    deep = tmp_path / "deep.toml"
    deep.write_text(".".join(["a"] * 100000) + " = 1\n")
    monkeypatch.setenv("GPUDOCTOR_CONFIG", str(deep))
    with pytest.raises(ValueError, match="nest deeper than 32 levels"):
        gpudoctor.preflight(root=root("ws-4x4090"))


@pytest.mark.parametrize("options", [{"root": "/"}, {"nvml_lib": "x"}, {"deadline_s": 1000}])
def test_bad_cuda_options(options):
    # cuda_available takes only the CUDA options: a preflight option is a mistake.
    with pytest.raises(ValueError):
        gpudoctor.cuda_available(**options)


def test_missing_gpudoctor_binary(monkeypatch):
    monkeypatch.setenv("GPUDOCTOR_EXE", "/nonexistent/gpudoctor")
    with pytest.raises(gpudoctor.GpudoctorError, match="GPUDOCTOR_EXE"):
        gpudoctor.cuda_available()
    with pytest.raises(gpudoctor.GpudoctorError, match="GPUDOCTOR_EXE"):
        gpudoctor.preflight()


def test_library_found_beside_the_binary_on_path():
    # A module installed apart from gpudoctor (the wheel in a venv) finds the
    # library through the gpudoctor binary on PATH, here the build tree's
    # (tests/packages/wheel_test.sh tries an installed prefix and the wheel).
    build = os.path.dirname(os.path.realpath(os.environ["GPUDOCTOR_LIB"]))
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUDOCTOR_LIB", "GPUDOCTOR_EXE", "LD_LIBRARY_PATH")}
    env["PATH"] = f"{build}:/usr/bin:/bin"
    code = "import gpudoctor; print(gpudoctor.library_path())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(os.path.realpath(r.stdout.strip())) == build


def test_missing_library():
    code = "import gpudoctor; gpudoctor.version()"
    env = dict(os.environ, GPUDOCTOR_LIB="/nonexistent/libgpudoctor.so.0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "GpudoctorError" in r.stderr and "GPUDOCTOR_LIB" in r.stderr


# --- threads and file descriptors ---------------------------------------------------------


def test_concurrent_calls(fake):
    fake("ws-4x4090")
    results = []

    def work(i):
        if i % 2:
            results.append(gpudoctor.cuda_available(**CUDA_LIBS))
        else:
            results.append(gpudoctor.preflight(root=root("ws-4x4090"), **ALL_LIBS)["verdict"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(map(str, results)) == ["True"] * 3 + ["ok"] * 3


def probe_children():
    """Pids of this process's children running the CUDA probe."""
    me = str(os.getpid())
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if ppid == me and b"__probe-cuda" in cmdline:
            found.append(pid)
    return found


def test_probe_child_inherits_no_stray_fds(fake):
    # A host program's inheritable descriptor (a pipe another library made
    # without O_CLOEXEC) must not leak into the probe child: there it keeps
    # the pipe open for as long as a hung driver call lives.
    fake("cuda-hang")
    r, w = os.pipe()
    os.set_inheritable(w, True)
    inode = os.fstat(w).st_ino
    done = threading.Event()
    t = threading.Thread(target=lambda: (gpudoctor.cuda_available(deadline_s=2, **CUDA_LIBS),
                                         done.set()))
    t.start()
    try:
        fds = None
        deadline = time.monotonic() + 1.5
        while fds is None and time.monotonic() < deadline:
            for pid in probe_children():
                with contextlib.suppress(OSError):
                    fds = {fd: os.readlink(f"/proc/{pid}/fd/{fd}")
                           for fd in os.listdir(f"/proc/{pid}/fd")}
            time.sleep(0.02)
        assert fds is not None, "no probe child seen"
        assert f"pipe:[{inode}]" not in fds.values(), json.dumps(fds)
    finally:
        t.join(10)
        os.close(r)
        os.close(w)


def test_host_that_ignores_sigchld(fake):
    # Daemons and some launchers set SIGCHLD to SIG_IGN; the kernel then reaps
    # children itself and waitpid() never sees them exit.
    import signal
    fake("ws-4x4090")
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        status = gpudoctor.cuda_status(deadline_s=2, **CUDA_LIBS)
    finally:
        signal.signal(signal.SIGCHLD, old)
    assert status["available"] is True, status["error"]
