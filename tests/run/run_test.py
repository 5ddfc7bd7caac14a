#!/usr/bin/env python3
"""End-to-end tests of `gpudoctor run` and `gpudoctor env`, run as a user
runs them: the real binary over recorded machine trees (tests/roots) and the
fake NVML/CUDA libraries (build/fakes, driven by tests/fakes/scenarios).

What `run` must do (docs/run.md): pass the command's exit code and signals
through (it execs the command), refuse with exit 69 when too few fit GPUs
remain, give the command CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES by UUID,
pin its CPUs with --bind-cpus (read back from /proc/self/status in the
child), and answer 127/126/64 like a shell for a missing, unrunnable or
absent command. What `env` must print in each format (docs/env.md).

usage: run_test.py GPUDOCTOR FAKES_DIR [-k NAME] [--sanitized]

--sanitized skips what an ASan build cannot do (start under ulimit -v).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402  (tests/harness.py)
from harness import Skip  # noqa: E402
ROOTS = os.path.join(SRC, "tests", "roots")
FAKE_SCENARIOS = os.path.join(SRC, "tests", "fakes", "scenarios")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")

GD = None
FAKES = None
SANITIZED = False



def need_cuda_stub():
    if not os.path.exists(os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")):
        raise Skip(f"no CUDA toolkit stub under {CUDA_HOME}")

U = {bus: "GPU-1b9a0c7e-0d3f-4c1e-9a52-0000000000" + bus for bus in ("01", "21", "41", "61")}
EXIT_REFUSED = 69
EXIT_REPORT_FILE = 73


def probe_args(root="ws-4x4090"):
    root_dir = root if os.path.isabs(root) else os.path.join(ROOTS, root)
    return ["--root", root_dir,
            "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
            "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]


def base_env(fake="ws-4x4090", **extra):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(FAKE_SCENARIOS, fake + ".json")}
    env.update(extra)
    return env


def gd(args, env=None, timeout=60, **kw):
    return subprocess.run([GD] + args, env=env or base_env(), capture_output=True, text=True,
                          timeout=timeout, **kw)


def run_cmd(cmd, opts=(), root="ws-4x4090", env=None):
    """gpudoctor run OPTS <probe args> -- CMD"""
    return gd(["run"] + list(opts) + probe_args(root) + ["--"] + cmd, env=env)


def expect(cond, what, proc=None):
    if not cond:
        extra = ""
        if proc is not None:
            extra = f"\n  exit {proc.returncode}\n  stdout: {proc.stdout!r}\n  stderr: {proc.stderr!r}"
        raise AssertionError(what + extra)


def child_env(proc):
    """KEY=VALUE lines the child printed with `env`."""
    out = {}
    for line in proc.stdout.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


# --- exit codes and signals -----------------------------------------------------

def test_exit_code_pass_through():
    p = run_cmd(["sh", "-c", "exit 7"])
    expect(p.returncode == 7, "run -- sh -c 'exit 7' must exit 7", p)
    p = run_cmd(["true"])
    expect(p.returncode == 0, "run -- true must exit 0", p)
    p = run_cmd(["sh", "-c", "exit 3"])
    expect(p.returncode == 3, "a command's 3 is its own, not gpudoctor's", p)


def test_signal_pass_through():
    # The shell kills itself: the parent sees a death by SIGTERM (a shell
    # reports it as 143), not an exit code gpudoctor made up.
    p = run_cmd(["sh", "-c", "kill -TERM $$"])
    expect(p.returncode == -signal.SIGTERM, "the command's own SIGTERM death must show", p)


def test_sigterm_to_gpudoctor_pid_reaches_the_command():
    script = "trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.05; done"
    proc = subprocess.Popen([GD, "run"] + probe_args() + ["--", "sh", "-c", script],
                            env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        expect(line.strip() == "ready", f"the command did not start: {line!r}")
        with open(f"/proc/{proc.pid}/comm") as f:
            comm = f.read().strip()
        expect(comm == "sh", f"the gpudoctor pid must BE the command after exec, comm={comm!r}")
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    expect(proc.returncode == 42 and "got-term" in out,
           f"SIGTERM to the pid must reach the command's trap: exit {proc.returncode}, "
           f"out {out!r}, err {err!r}")


# --- run --watch ----------------------------------------------------------------------

def test_watch_summarizes_a_job_that_ends_on_its_own():
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "watch.json")
        p = run_cmd(["sh", "-c", "sleep 1; exit 5"],
                    opts=["--watch", "--watch-interval", "0.2", "--json-report", report])
        expect(p.returncode == 5, "run --watch must exit with the command's code", p)
        expect("gpudoctor: run --watch: job summary: sh exited with 5 after 1 s; 4 GPUs "
               "watched" in p.stderr, "the summary line", p)
        # The fake's readings (tests/fakes/scenarios/ws-4x4090.json).
        expect("run --watch:   GPU 0000:01:00.0: peak 36 °C, power peak 22 W mean 22 W, never "
               "throttled, ECC n/a\n" in p.stderr, "GPU 0000:01:00.0's line", p)
        for bus in U:
            expect(f"run --watch:   GPU 0000:{bus}:00.0: peak " in p.stderr, f"GPU {bus}", p)
        expect("no GPU was lost" in p.stderr and "FATAL" not in p.stderr, "a quiet job", p)
        with open(report) as f:
            doc = json.load(f)
        expect(doc["schema"] == "gpudoctor.watch/v1" and doc["ended"]["exit_code"] == 5
               and len(doc["gpus"]) == 4 and doc["fatal"] is None and not doc["gpu_lost"]
               and doc["samples"] >= 3, f"the watch report: {doc}")
    p = run_cmd(["sh", "-c", "kill -TERM $$"], opts=["--watch"])
    expect(p.returncode == 128 + signal.SIGTERM and "was killed by SIGTERM" in p.stderr,
           "a job killed by a signal: 128 + N, as a shell says", p)
    p = run_cmd(["true"], opts=["--stop-on-fatal"])
    expect(p.returncode == 64 and "--stop-on-fatal needs --watch" in p.stderr, "usage", p)


def test_watch_a_gpu_that_overheats_then_falls_off_the_bus():
    """The fake GPU 0000:61:00.0 heats up (93 °C, HW slowdown) while a dummy
    job runs, then falls off the bus (NVML GPU_IS_LOST, Xid 79 in the kernel
    log): the diagnosis comes at once, --stop-on-fatal stops the job, and the
    summary and the JSON report say what happened."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(ROOTS, "ws-4x4090"), root, symlinks=True)
        hot, lost = os.path.join(tmp, "hot"), os.path.join(tmp, "lost")
        with open(os.path.join(FAKE_SCENARIOS, "ws-4x4090.json")) as f:
            sc = json.load(f)
        gpu = next(g for g in sc["gpus"] if g["bus_id"] == "0000:61:00.0")
        gpu["when_file"] = [
            {"path": hot, "health": {"temperature_c": 93, "clock_event_reasons": 0x48,
                                     "power_usage_mw": 450000}},
            {"path": lost, "lost": True}]
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w") as f:
            json.dump(sc, f)
        report = os.path.join(tmp, "watch.json")
        # A grandchild in a session of its own that ignores SIGTERM: the
        # main process exits at SIGTERM, the grandchild only at SIGKILL 10 s
        # later, and never outlives gpudoctor.
        gpid_file = os.path.join(tmp, "grandchild.pid")
        script = (f"setsid sh -c 'trap \"\" TERM; echo $$ > {gpid_file}; exec sleep 1000' & "
                  f"while [ ! -s {gpid_file} ]; do sleep 0.01; done; "
                  "trap 'echo got-term; exit 42' TERM; echo ready; "
                  "while :; do sleep 0.05; done")
        proc = subprocess.Popen(
            [GD, "run", "--watch", "--watch-interval", "0.2", "--stop-on-fatal",
             "--json-report", report] + probe_args(root) + ["--", "sh", "-c", script],
            env=base_env(GPUDOCTOR_FAKE_SCENARIO=scenario), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            expect(proc.stdout.readline().strip() == "ready", "the job did not start")
            open(hot, "w").close()
            time.sleep(3)  # several samples in the hot stage, even under ASan
            with open(os.path.join(root, "dev", "kmsg"), "a") as f:
                f.write("4,99990,86000000000,-;NVRM: Xid (PCI:0000:61:00): 79, pid='<unknown>', "
                        "name=<unknown>, GPU has fallen off the bus.\n")
            open(lost, "w").close()
            with open(gpid_file) as f:
                gpid = int(f.read())
            out, err = proc.communicate(timeout=40)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        expect(proc.returncode == 42 and "got-term" in out,
               f"--stop-on-fatal must SIGTERM the job: exit {proc.returncode}, err {err!r}")
        expect(not pid_alive(gpid), f"the grandchild {gpid} that ignores SIGTERM outlived "
               f"gpudoctor: {err!r}")
        expect(f"pid {gpid} (sleep), outlived sh: killed by SIGKILL" in err
               and "no process of the job is left" in err,
               f"the summary names the grandchild and its SIGKILL: {err!r}")
        expect("FATAL at " in err and "0000:61:00.0" in err.split("FATAL at ", 1)[1].split("\n")[0],
               f"the diagnosis names the GPU: {err!r}")
        expect("stopping sh (--stop-on-fatal): SIGTERM to its process group and every process "
               "it started, SIGKILL 10 s later" in err,
               f"says it stops the job: {err!r}")
        expect("GPU 0000:61:00.0: LOST at " in err and "peak 93 °C" in err
               and "throttled " in err and "HW slowdown" in err, f"the GPU's line: {err!r}")
        expect("FATAL Xid 79 on 0000:61:00.0: " in err and "a GPU was lost during the job" in err,
               f"the events: {err!r}")
        with open(report) as f:
            doc = json.load(f)
        bad = next(g for g in doc["gpus"] if g["bus_id"] == "0000:61:00.0")
        expect(doc["gpu_lost"] and bad["lost"] and bad["peak_temperature_c"] == 93
               and bad["throttled_s"] > 0 and bad["throttled_by_reason_s"]["HW slowdown"] > 0
               and doc["fatal"]["gpu"] == "0000:61:00.0" and doc["ended"]["stopped_on_fatal"]
               and doc["ended"]["exit_code"] == 42, f"the watch report: {doc}")
        left = [p for p in doc["ended"]["other_processes"] if p["pid"] == gpid]
        expect(left and left[0]["sigkill"] and left[0]["outlived_main"]
               and not left[0]["still_running"], f"the grandchild in the report: {doc['ended']}")
        xids = [e for e in doc["events"] if e["kind"] == "xid" and e["code"] == 79]
        expect(len(xids) == 1 and xids[0]["fatal"] and xids[0]["gpu"] == "0000:61:00.0",
               f"Xid 79 in the report: {doc['events']}")
        others = [g for g in doc["gpus"] if g["bus_id"] != "0000:61:00.0"]
        expect(all(not g["lost"] and g["peak_temperature_c"] < 50 for g in others),
               f"the other GPUs stayed cool: {others}")


def pid_alive(pid):
    """True while pid runs or is an unreaped zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_watch_stops_what_the_job_leaves_behind():
    """A job that starts two background processes (one in a session of its
    own, as a daemon makes itself) and exits: the exit code stays the job's,
    both are stopped with SIGTERM at once (no 10 s wait for processes that
    end on it), reaped, and named in the summary."""
    with tempfile.TemporaryDirectory() as tmp:
        p1, p2 = os.path.join(tmp, "bg.pid"), os.path.join(tmp, "daemon.pid")
        report = os.path.join(tmp, "watch.json")
        script = (f"sleep 1000 & echo $! > {p1}; "
                  f"setsid sh -c 'echo $$ > {p2}; exec sleep 1000' & "
                  f"while [ ! -s {p2} ]; do sleep 0.01; done; exit 3")
        t0 = time.monotonic()
        p = run_cmd(["sh", "-c", script], opts=["--watch", "--json-report", report])
        took = time.monotonic() - t0
        with open(p1) as f:
            bg = int(f.read())
        with open(p2) as f:
            daemon = int(f.read())
        expect(p.returncode == 3, "the exit code is the main process's", p)
        expect(not pid_alive(bg) and not pid_alive(daemon),
               f"no process of the job is left: {bg} {pid_alive(bg)}, {daemon} "
               f"{pid_alive(daemon)}", p)
        expect("2 processes of the job outlived sh: SIGTERM to each" in p.stderr
               and f"pid {bg} (sleep): ended after SIGTERM" in p.stderr
               and f"pid {daemon} (sleep): ended after SIGTERM" in p.stderr
               and "no process of the job is left" in p.stderr, "the summary names them", p)
        expect(took < 8, f"processes that end on SIGTERM are not waited 10 s for: {took:.1f} s",
               p)
        with open(report) as f:
            ended = json.load(f)["ended"]
        expect(ended["exit_code"] == 3 and sorted(x["pid"] for x in ended["other_processes"])
               == sorted([bg, daemon]) and all(x["outlived_main"] and not x["sigkill"]
                                               for x in ended["other_processes"]),
               f"the report: {ended}")
    # A job that leaves nothing behind says nothing about it.
    p = run_cmd(["sh", "-c", "sleep 0.1 & wait; exit 0"], opts=["--watch"])
    expect(p.returncode == 0 and "outlived" not in p.stderr, "a tidy job", p)


def test_watch_passes_signals_to_the_job():
    """SIGTERM to gpudoctor reaches the job's trap; the exit code is the
    job's own, and a job that ends on it leaves nothing to stop."""
    script = "trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.05; done"
    proc = subprocess.Popen([GD, "run", "--watch"] + probe_args() + ["--", "sh", "-c", script],
                            env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        expect(proc.stdout.readline().strip() == "ready", "the job did not start")
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    expect(proc.returncode == 42 and "got-term" in out and "sh exited with 42" in err,
           f"SIGTERM to run --watch reaches the job: exit {proc.returncode}, err {err!r}")


def test_watch_names_the_gpu_and_call_that_hung():
    """NVML hangs in nvmlDeviceGetTemperature while the job runs (the fake's
    hang_when_file): the summary names the call and the GPU, not only a
    count of failed samples."""
    with tempfile.TemporaryDirectory() as tmp:
        hang, done = os.path.join(tmp, "hang"), os.path.join(tmp, "done")
        with open(os.path.join(FAKE_SCENARIOS, "ws-4x4090.json")) as f:
            sc = json.load(f)
        sc["hang_when_file"] = {"nvmlDeviceGetTemperature": hang}
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w") as f:
            json.dump(sc, f)
        report = os.path.join(tmp, "watch.json")
        script = f"echo ready; while [ ! -e {done} ]; do sleep 0.05; done"
        proc = subprocess.Popen(
            [GD, "run", "--watch", "--watch-interval", "0.2", "--deadline", "1",
             "--json-report", report] + probe_args() + ["--", "sh", "-c", script],
            env=base_env(GPUDOCTOR_FAKE_SCENARIO=scenario), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            expect(proc.stdout.readline().strip() == "ready", "the job did not start")
            time.sleep(1)  # good samples first, so the GPU's bus id is known
            open(hang, "w").close()
            time.sleep(2.5)
            os.unlink(hang)
            time.sleep(0.5)
            open(done, "w").close()
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        expect(proc.returncode == 0, f"the job's exit code: {proc.returncode}, {err!r}")
        with open(report) as f:
            doc = json.load(f)
        fails = doc["sample_failures"]
        expect(len(fails) == 1 and fails[0]["kind"] == "hung"
               and fails[0]["call"] == "nvmlDeviceGetTemperature"
               and fails[0]["gpu"] in [f"0000:{b}:00.0" for b in U]
               and fails[0]["samples"] == doc["failed_samples"] >= 1,
               f"the report's sample failures: {fails}")
        line = (f"NVML hung in nvmlDeviceGetTemperature on {fails[0]['gpu']} "
                f"({fails[0]['samples']} sample")
        expect(line in err, f"the summary names the call and the GPU ({line}): {err!r}")


def test_report_files_are_not_written_through_a_symlink():
    with tempfile.TemporaryDirectory() as tmp:
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        for flag in ("--summary-file", "--json-report"):
            link = os.path.join(tmp, flag.strip("-") + ".link")
            os.symlink(victim, link)
            p = run_cmd(["sh", "-c", "exit 4"], opts=["--watch", flag, link])
            expect(p.returncode == 4, f"{flag}: the exit code stays the job's", p)
            expect(f"gpudoctor: run --watch: {flag} {link}: is a symbolic link; not followed"
                   in p.stderr, f"{flag}: one line says why", p)
            expect(os.path.islink(link), f"{flag}: the link stays a link", p)
        link = os.path.join(tmp, "report.link")
        os.symlink(victim, link)
        p = run_cmd(["true"], opts=["--json-report", link])
        expect(p.returncode == EXIT_REPORT_FILE
               and f"gpudoctor: run: --json-report {link}: is a symbolic link; not followed"
               in p.stderr, "run without --watch refuses it too (73)", p)
        with open(victim) as f:
            expect(f.read() == "precious\n", "the link's target is untouched")


def test_command_not_found_and_not_executable():
    p = run_cmd(["no-such-command-gpudoctor"])
    expect(p.returncode == 127, "a missing command exits 127", p)
    expect("no-such-command-gpudoctor: command not found" in p.stderr, "says so like a shell", p)
    p = run_cmd(["/nonexistent/dir/cmd"])
    expect(p.returncode == 127, "a missing path exits 127", p)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "script")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o644)
        p = run_cmd([path])
        expect(p.returncode == 126, "a file without the x bit exits 126", p)
        expect("Permission denied" in p.stderr, "and says why", p)


def test_usage_errors():
    p = gd(["run"] + probe_args())
    expect(p.returncode == 64 and "no command" in p.stderr, "no command is a usage error", p)
    p = gd(["run"] + probe_args() + ["--"])
    expect(p.returncode == 64, "`--` and nothing after it is a usage error", p)
    p = gd(["run", "--require", "x"] + probe_args() + ["--", "true"])
    expect(p.returncode == 64, "--require x is a usage error", p)
    # Without `--` a command option is read as run's own: a usage error,
    # never a half-parsed command.
    p = gd(["run"] + probe_args() + ["sh", "-c", "exit 0"])
    expect(p.returncode == 64, "a command with options needs --", p)
    # Options after `--` belong to the command.
    p = run_cmd(["echo", "--require", "5", "--", "-v"])
    expect(p.returncode == 0 and p.stdout == "--require 5 -- -v\n", "words after -- pass as is", p)


def test_no_descriptor_leaks_into_the_command():
    direct = subprocess.run(["ls", "/proc/self/fd"], capture_output=True, text=True).stdout
    p = run_cmd(["ls", "/proc/self/fd"])
    expect(p.stdout.split() == direct.split(),
           f"the command gets the caller's descriptors only: {direct.split()}", p)


# --- refusal ----------------------------------------------------------------------------

def test_refuses_more_gpus_than_the_node_has():
    p = run_cmd(["sh", "-c", "echo RAN"], ["--require", "5"])
    expect(p.returncode == EXIT_REFUSED, "--require 5 on a 4-GPU node is refused (69)", p)
    expect("RAN" not in p.stdout, "the command must not run", p)
    expect("refusing to start sh: 4 fit GPUs, --require 5" in p.stderr, "one clear line", p)
    p = run_cmd(["sh", "-c", "echo RAN"], ["--require", "4"])
    expect(p.returncode == 0 and "RAN" in p.stdout, "--require 4 on 4 fit GPUs runs", p)


def test_refuses_when_a_gpu_is_lost():
    env = base_env("gpu-lost")
    p = run_cmd(["sh", "-c", "echo RAN"], ["--require", "4"], env=env)
    expect(p.returncode == EXIT_REFUSED, "3 fit GPUs and --require 4 is refused", p)
    expect("RAN" not in p.stdout, "the command must not run", p)
    # The ranked causes, briefly: root cause first.
    a = p.stderr.find("FAIL gpu.fallen-off-bus")
    b = p.stderr.find("FAIL gpu.missing")
    expect(0 <= a < b, "ranked causes on stderr, root cause first", p)
    expect("0000:61:00.0" in p.stderr, "names the unfit GPU", p)
    p = run_cmd(["sh", "-c", "echo RAN"], ["--require", "3"], env=env)
    expect(p.returncode == 0 and "RAN" in p.stdout, "--require 3 runs on the 3 left", p)


def test_refusal_counts_the_users_selection():
    env = base_env(CUDA_VISIBLE_DEVICES="0,1")
    p = run_cmd(["true"], ["--require", "3"], env=env)
    expect(p.returncode == EXIT_REFUSED, "CUDA_VISIBLE_DEVICES=0,1 gives 2 GPUs, not 3", p)
    expect("selected by CUDA_VISIBLE_DEVICES" in p.stderr, "says the selection limited it", p)


def test_refuses_a_launcher_asking_for_more_gpus_than_it_sees():
    # torchrun starts a process per GPU; ranks past the visible GPUs die on
    # "invalid device ordinal" (docs/run.md, step 4).
    p = run_cmd(["torchrun", "--nproc_per_node=8", "train.py"])
    expect(p.returncode == EXIT_REFUSED, "8 processes on a 4-GPU node are refused (69)", p)
    expect("refusing to start torchrun: torchrun --nproc_per_node=8 asks for 8 GPUs, "
           "the command sees 4" in p.stderr, "one clear line", p)
    env = base_env(CUDA_VISIBLE_DEVICES="0,1")
    p = run_cmd(["sh", "-c", "echo RAN", "torchrun", "--nproc_per_node", "4"], env=env)
    expect(p.returncode == EXIT_REFUSED, "the user's selection of 2 counts", p)
    expect("RAN" not in p.stdout, "the command must not run", p)
    p = run_cmd(["sh", "-c", "echo RAN", "torchrun", "--nproc_per_node", "2"], env=env)
    expect(p.returncode == 0 and "RAN" in p.stdout, "2 processes on 2 visible GPUs run", p)
    p = run_cmd(["sh", "-c", "echo RAN", "torchrun", "--nproc_per_node=gpu"])
    expect(p.returncode == 0 and "RAN" in p.stdout, "'gpu' asks for what is visible", p)
    # The selection options turn the check off, as for any check.
    p = run_cmd(["sh", "-c", "echo RAN", "deepspeed", "--num_gpus", "8"],
                ["--skip", "device-ordinal"])
    expect(p.returncode == 0 and "RAN" in p.stdout, "--skip device-ordinal starts it", p)


def test_machine_wide_failure_leaves_no_fit_gpu():
    # ulimit -v 32 GiB: CUDA cannot start at all, on any GPU.
    if SANITIZED:
        raise Skip("ASan cannot start under ulimit -v")

    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (32 << 30, 32 << 30))
    p = subprocess.run([GD, "run", "--require", "1"] + probe_args("ws-4x4090-ulimit") +
                       ["--", "true"], env=base_env("ws-4x4090-ulimit"), capture_output=True,
                       text=True, timeout=60, preexec_fn=limit)
    expect(p.returncode == EXIT_REFUSED, "no GPU is fit when CUDA cannot start", p)
    expect("every GPU (memory.address-space-limit" in p.stderr, "names the machine-wide cause", p)


# --- the environment the command sees --------------------------------------------------

def test_child_env_with_exclude_unhealthy():
    p = run_cmd(["env"], ["--exclude-unhealthy"])
    e = child_env(p)
    expect(p.returncode == 0, "runs", p)
    expect(e.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID", "CUDA_DEVICE_ORDER=PCI_BUS_ID", p)
    expect(e.get("CUDA_VISIBLE_DEVICES") == ",".join(U[b] for b in ("01", "21", "41", "61")),
           "every GPU by UUID in PCI order when all are fit", p)


def test_child_env_leaves_out_the_lost_gpu():
    p = run_cmd(["env"], ["--exclude-unhealthy"], env=base_env("gpu-lost"))
    e = child_env(p)
    expect(e.get("CUDA_VISIBLE_DEVICES") == ",".join(U[b] for b in ("01", "21", "41")),
           "the lost GPU is not in the list", p)


def test_child_env_unfit_enumerable_gpu():
    # Xid 79 on 0000:41:00.0 in the kernel log; NVML and CUDA still list it.
    p = run_cmd(["env"], ["--exclude-unhealthy"], root="ws-4x4090-xid79")
    expect(child_env(p).get("CUDA_VISIBLE_DEVICES") ==
           ",".join(U[b] for b in ("01", "21", "61")), "--exclude-unhealthy drops 41", p)
    p = run_cmd(["env"], root="ws-4x4090-xid79")
    e = child_env(p)
    expect("CUDA_VISIBLE_DEVICES" not in e, "without --exclude-unhealthy nothing is hidden", p)
    expect(e.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID", "the order is still set", p)
    expect("the command still sees 0000:41:00.0" in p.stderr, "and it warns", p)


def test_child_env_respects_users_selection():
    # CUDA's default order here is 41, 61, 01, 21: the user's 0 is 0000:41.
    env = base_env(CUDA_VISIBLE_DEVICES="0")
    p = run_cmd(["env"], env=env)
    expect(child_env(p).get("CUDA_VISIBLE_DEVICES") == U["41"],
           "the user's index is kept as the same GPU by UUID under PCI_BUS_ID", p)
    # With the unfit 41 selected, --exclude-unhealthy narrows, never widens.
    env = base_env(CUDA_VISIBLE_DEVICES="0,2")
    p = run_cmd(["env"], ["--exclude-unhealthy"], root="ws-4x4090-xid79", env=env)
    expect(child_env(p).get("CUDA_VISIBLE_DEVICES") == U["01"], "0,2 minus the unfit 41", p)
    env = base_env(CUDA_VISIBLE_DEVICES="0")
    p = run_cmd(["sh", "-c", 'echo "[$CUDA_VISIBLE_DEVICES]"'],
                ["--exclude-unhealthy"], root="ws-4x4090-xid79", env=env)
    expect(p.stdout == "[]\n", "the only selected GPU unfit: nothing visible, not another GPU",
           p)


def test_stub_library_fixed_for_the_child():
    need_cuda_stub()
    with tempfile.TemporaryDirectory() as tmp:
        stub_dir = os.path.join(tmp, "toolkit", "lib64", "stubs")
        os.makedirs(stub_dir)
        os.symlink(os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so"),
                   os.path.join(stub_dir, "libcuda.so.1"))
        env = base_env(LD_LIBRARY_PATH=stub_dir + ":/opt/extra/lib")
        args = ["run", "--require", "4", "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
                "--cudart-lib", os.path.join(FAKES, "libcudart.so.13"),
                "--root", os.path.join(ROOTS, "ws-4x4090"), "--", "env"]
        p = gd(args, env=env)
        expect(p.returncode == 0, "the stub is cured by the env fix: 4 fit GPUs", p)
        expect(child_env(p).get("LD_LIBRARY_PATH") == "/opt/extra/lib",
               "the child's LD_LIBRARY_PATH has no stubs directory", p)


def test_json_report():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.json")
        p = run_cmd(["true"], ["--json-report", path], env=base_env("gpu-lost"))
        expect(p.returncode == 0, "runs", p)
        with open(path) as f:
            doc = json.load(f)
        expect(doc["schema"] == "gpudoctor.report/v1" and doc["verdict"] == "fail",
               f"the report is check's JSON: {doc.get('schema')} {doc.get('verdict')}")
        expect(doc["findings"][0]["id"] == "gpu.fallen-off-bus", "ranked like check")
        # Written even when run then refuses.
        os.unlink(path)
        p = run_cmd(["true"], ["--json-report", path, "--require", "9"])
        expect(p.returncode == EXIT_REFUSED and os.path.exists(path), "written, then refused", p)
        p = run_cmd(["true"], ["--json-report", os.path.join(tmp, "no", "dir.json")])
        expect(p.returncode == EXIT_REPORT_FILE, "an unwritable report path exits 73", p)


# --- CPU binding ----------------------------------------------------------------------------

def root_with_cpulists(tmp, cpulists):
    """A copy of the ws-4x4090 tree whose GPUs' local_cpulist are `cpulists`
    (bus -> text), so a 2-CPU test machine can see a pin take effect."""
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(ROOTS, "ws-4x4090"), root, symlinks=True)
    done = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "sys", "devices")):
        name = os.path.basename(dirpath)
        if name in cpulists and "local_cpulist" in filenames:
            with open(os.path.join(dirpath, "local_cpulist"), "w") as f:
                f.write(cpulists[name] + "\n")
            done.add(name)
    expect(done == set(cpulists), f"local_cpulist found for {sorted(done)}")
    return root


STATUS = "grep Cpus_allowed_list /proc/self/status"


def allowed_in(proc):
    for line in proc.stdout.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return None


def cpu_text(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def test_bind_cpus_pins_to_the_rank_gpus_cpus():
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        print("  (one CPU allowed: pinning cannot be told apart; checking the message only)")
    lo, hi = allowed[0], allowed[-1]
    with tempfile.TemporaryDirectory() as tmp:
        root = root_with_cpulists(tmp, {"0000:01:00.0": str(lo), "0000:21:00.0": str(hi),
                                        "0000:41:00.0": str(lo), "0000:61:00.0": str(hi)})
        for env_extra, want in [({}, lo),
                                ({"LOCAL_RANK": "1"}, hi),
                                ({"SLURM_LOCALID": "1"}, hi),
                                ({"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, hi),
                                ({"LOCAL_RANK": "0", "SLURM_LOCALID": "1"}, lo)]:
            p = run_cmd(["sh", "-c", STATUS], ["--bind-cpus"], root=root,
                        env=base_env(**env_extra))
            expect(p.returncode == 0, f"runs with {env_extra}", p)
            expect(allowed_in(p) == str(want),
                   f"{env_extra}: the child's Cpus_allowed_list must be {want}", p)
            expect(f"CPUs {want}" in p.stderr, "says where it pinned", p)
        # Without --bind-cpus nothing is pinned.
        p = run_cmd(["sh", "-c", STATUS], root=root)
        expect(allowed_in(p) == allowed_list_text(allowed), "no pin without --bind-cpus", p)


def allowed_list_text(cpus):
    """The kernel's cpulist form of a CPU set: 0-3,8."""
    parts = []
    i = 0
    while i < len(cpus):
        k = i
        while k + 1 < len(cpus) and cpus[k + 1] == cpus[k] + 1:
            k += 1
        parts.append(str(cpus[i]) if k == i else f"{cpus[i]}-{cpus[k]}")
        i = k + 1
    return ",".join(parts)


def test_bind_cpus_rank_counts_visible_gpus():
    # With the lost 0000:61:00.0 left out the job sees 01, 21, 41: rank 2 is 41.
    allowed = sorted(os.sched_getaffinity(0))
    lo, hi = allowed[0], allowed[-1]
    with tempfile.TemporaryDirectory() as tmp:
        root = root_with_cpulists(tmp, {"0000:01:00.0": str(lo), "0000:21:00.0": str(lo),
                                        "0000:41:00.0": str(hi), "0000:61:00.0": str(lo)})
        p = run_cmd(["sh", "-c", STATUS], ["--bind-cpus", "--exclude-unhealthy"], root=root,
                    env=base_env("gpu-lost", LOCAL_RANK="2"))
        expect(allowed_in(p) == str(hi), "rank 2 of the visible GPUs is 0000:41:00.0", p)
        p = run_cmd(["sh", "-c", STATUS], ["--bind-cpus", "--exclude-unhealthy"], root=root,
                    env=base_env("gpu-lost", LOCAL_RANK="3"))
        expect(p.returncode == 0 and "sees 3 GPUs; CPUs not pinned" in p.stderr,
               "a rank past the visible GPUs warns and does not pin", p)
        expect(allowed_in(p) == allowed_list_text(allowed), "and leaves the CPUs alone", p)
        # One GPU per task (srun --gpus-per-task): the one visible GPU is the
        # task's whatever its rank.
        p = run_cmd(["sh", "-c", STATUS], ["--bind-cpus"], root=root,
                    env=base_env(SLURM_LOCALID="3", CUDA_VISIBLE_DEVICES=U["41"]))
        expect(allowed_in(p) == str(hi), "the only visible GPU, 0000:41:00.0, is rank 3's", p)


def test_bind_cpus_empty_intersection_warns():
    allowed = sorted(os.sched_getaffinity(0))
    outside = max(allowed) + 1
    with tempfile.TemporaryDirectory() as tmp:
        root = root_with_cpulists(tmp, {"0000:01:00.0": str(outside)})
        p = run_cmd(["sh", "-c", STATUS], ["--bind-cpus"], root=root)
        expect(p.returncode == 0, "still runs", p)
        expect("is allowed to this process" in p.stderr and "CPUs not pinned" in p.stderr,
               "warns that it did not pin", p)
        expect(allowed_in(p) == allowed_list_text(allowed), "CPUs unchanged", p)
        p = run_cmd(["true"], ["--bind-cpus"], root=root, env=base_env(LOCAL_RANK="x"))
        expect(p.returncode == 0 and "LOCAL_RANK=x is not a local rank" in p.stderr,
               "a bad rank warns, the job runs", p)


# --- env --------------------------------------------------------------------------------------

ALL4 = ",".join(U[b] for b in ("01", "21", "41", "61"))
ORDER_WHY = ("CUDA numbers GPUs fastest first by default, unlike nvidia-smi on this machine: "
             "with PCI_BUS_ID CUDA index = nvidia-smi index [device-order.mismatch]")
CVD_WHY = ("the 4 GPUs by UUID, so no GPU lost later shifts the others: "
           "0000:01:00.0, 0000:21:00.0, 0000:41:00.0, 0000:61:00.0")


def env_out(fmt, fake="ws-4x4090", root="ws-4x4090", **extra):
    return gd(["env", "--format", fmt] + probe_args(root), env=base_env(fake, **extra))


def test_env_formats():
    want = {
        "sh": ("# gpudoctor env: 4 of 4 GPUs fit; jobs get 4\n"
               f"# {ORDER_WHY}\nexport CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
               f"# {CVD_WHY}\nexport CUDA_VISIBLE_DEVICES={ALL4}\n"),
        "fish": ("# gpudoctor env: 4 of 4 GPUs fit; jobs get 4\n"
                 f"# {ORDER_WHY}\nset -gx CUDA_DEVICE_ORDER PCI_BUS_ID\n"
                 f"# {CVD_WHY}\nset -gx CUDA_VISIBLE_DEVICES {ALL4}\n"),
        "docker": f"-e CUDA_DEVICE_ORDER=PCI_BUS_ID -e CUDA_VISIBLE_DEVICES={ALL4}\n",
        "k8s": ("# gpudoctor env: 4 of 4 GPUs fit; jobs get 4\nenv:\n"
                f"  # {ORDER_WHY}\n  - name: CUDA_DEVICE_ORDER\n    value: \"PCI_BUS_ID\"\n"
                f"  # {CVD_WHY}\n  - name: CUDA_VISIBLE_DEVICES\n    value: \"{ALL4}\"\n"),
    }
    for fmt, text in want.items():
        p = env_out(fmt)
        expect(p.returncode == 0 and p.stderr == "", f"env --format {fmt} exits 0 quietly", p)
        expect(p.stdout == text, f"env --format {fmt}:\n{p.stdout}\nexpected:\n{text}")
    p = gd(["env"] + probe_args(), env=base_env())
    expect(p.stdout == want["sh"], "sh is the default", p)
    try:
        import yaml
        doc = yaml.safe_load(env_out("k8s").stdout)
        expect(doc["env"][1] == {"name": "CUDA_VISIBLE_DEVICES", "value": ALL4},
               f"the k8s block is YAML: {doc}")
    except ImportError:
        pass


def test_env_bad_format():
    p = env_out("xml")
    expect(p.returncode == 64 and p.stdout == "", "--format xml is a usage error", p)
    expect("--format xml is not one of sh, fish, docker, k8s" in p.stderr, "one line", p)


def test_env_unfit_gpu_excluded():
    p = env_out("sh", fake="gpu-lost")
    expect(p.returncode == 0, "printed even with an unfit GPU: exit 0", p)
    expect(f"export CUDA_VISIBLE_DEVICES={U['01']},{U['21']},{U['41']}\n" in p.stdout,
           "the lost GPU is left out", p)
    expect("left out 1 unfit GPU: 0000:61:00.0 (gpu.fallen-off-bus, gpu.missing)" in p.stderr,
           "stderr names the excluded GPU and why", p)


def test_env_no_fit_gpu():
    p = env_out("sh", CUDA_VISIBLE_DEVICES="-1")
    expect(p.returncode == 2, "no GPU selected: exit 2", p)
    expect("export CUDA_VISIBLE_DEVICES=''\n" in p.stdout, "and CUDA_VISIBLE_DEVICES empty", p)


def test_env_round_trips_through_sh():
    need_cuda_stub()
    with tempfile.TemporaryDirectory() as tmp:
        stub_dir = os.path.join(tmp, "it's a", "lib64", "stubs")
        os.makedirs(stub_dir)
        os.symlink(os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so"),
                   os.path.join(stub_dir, "libcuda.so.1"))
        odd = "/opt/it's here"
        env = base_env(LD_LIBRARY_PATH=f"{stub_dir}:{odd}")
        args = ["env", "--root", os.path.join(ROOTS, "ws-4x4090"),
                "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
                "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]
        p = gd(args, env=env)
        expect(p.returncode == 0 and "[cuda.stub-library]" in p.stdout,
               "the stub's fix is printed with its id", p)
        sh = subprocess.run(["sh", "-c", p.stdout + 'printf "%s\\n" "$LD_LIBRARY_PATH" '
                             '"$CUDA_VISIBLE_DEVICES"'],
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
        expect(sh.stdout == f"{odd}\n{ALL4}\n", f"sh reads the values back: {sh.stdout!r}")
        d = gd(args[:1] + ["--format", "docker"] + args[1:], env=env)
        # The docker flags are shell words: sh splits them back into -e K=V pairs.
        words = subprocess.run(["sh", "-c", 'printf "%s\\n" ' + d.stdout], capture_output=True,
                               text=True, env={"PATH": "/usr/bin:/bin"}).stdout.splitlines()
        expect(words[-2:] == ["-e", f"LD_LIBRARY_PATH={odd}"], f"docker words: {words!r}", d)


def test_env_from_snapshot():
    snap = os.path.join(SRC, "tests", "snapshots", "ws-4x4090.json")
    p = gd(["env", "--from", snap], env={"PATH": "/usr/bin:/bin"})
    expect(p.returncode == 0 and "export CUDA_DEVICE_ORDER=PCI_BUS_ID" in p.stdout,
           "env --from a recorded snapshot", p)
    p = gd(["env", "--from", "/nonexistent.json"], env={"PATH": "/usr/bin:/bin"})
    expect(p.returncode == 3 and p.stderr.startswith("gpudoctor: env: "), "bad --from", p)


def main():
    global GD, FAKES, SANITIZED
    args = sys.argv[1:]
    SANITIZED = "--sanitized" in args
    args = [a for a in args if a != "--sanitized"]
    only = harness.take_k(args)
    if len(args) != 2:
        print(__doc__)
        return 64
    GD, FAKES = os.path.abspath(args[0]), os.path.abspath(args[1])
    return harness.run_tests(globals(), only)


if __name__ == "__main__":
    sys.exit(main())
