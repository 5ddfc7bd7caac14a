#!/usr/bin/env python3
"""A real single-node Slurm drains and resumes itself through
`gpudoctor check --slurm` (docs/slurm.md).

It starts munged, slurmctld and slurmd (Debian's packages) on 127.0.0.1 in a
temp dir, each as this script's own child: munged with its own key, socket
and pid file (slurm.conf's AuthInfo=socket= points Slurm at it), so a munged
someone else runs is neither used nor disturbed; slurmctld and slurmd on
free ports found at run time. slurmd's HealthCheckProgram is a small script
that picks a recorded machine by the word in a file the test flips and runs
deploy/slurm/gpudoctor-healthcheck.sh, the shipped wrapper, with the real
build's gpudoctor and the fake NVML/CUDA:

  healthy: tests/scenarios/hgx-healthy.json (an HGX H100, verdict info)
  failing: tests/scenarios/xid79.json (Xid 79 in the kernel log: GPU
           0000:41:00.0 fell off the bus)

It asserts, each within a bounded time:
  1. failing: sinfo shows the node drained with reason
     "gpudoctor: gpu.fallen-off-bus GPU 0000:41:00.0";
  2. healthy again: the node is resumed (idle, no reason);
  3. an admin drain ("admin: maintenance") stays over two health checks,
     healthy or failing, with the admin's reason;
  4. NVML failing for one probe (the fake's fail_once_file) is re-checked
     (--slurm-recheck) and drains nothing;
  5. GPU 0000:5d:00.0 lost (NVML: GPU_IS_LOST, CUDA: one device fewer) drains
     the node; back on the bus, the node stays drained while the re-probe
     before a resume fails (the fake diag helper crashes), and is resumed
     once it passes (NVML, a CUDA context and a level-1 diag on all 8 GPUs);
  6. a batch job run under `gpudoctor run --watch --summary-file ...` gets its
     health summary appended to its own output file by the shipped Epilog
     (deploy/slurm/gpudoctor-epilog.sh), written as the job's user;
  7. a job of user nobody named "x UserId=root(0) GroupId=root(0)", whose
     output file it turns into a symlink to a root-owned file and whose
     summary is a cron line: the Epilog writes as nobody, so the root-owned
     file is unchanged;
  8. a job of user daemon that leaves 2,000 summaries, beside one that user
     nobody put there under the job's id: the first 256 of daemon's are
     appended in rank order, nobody's is not, and all are removed;
  9. busy: a batch job holds all 8 GPUs (NVML lists its real pid on each,
     94 % of the memory, EXCLUSIVE_PROCESS mode) while health checks run:
     the node stays allocated with no reason, the fake libcuda is asked for
     no context, and the job completes;
 10. orphan: a job leaves a process behind (setsid: linuxproc no longer
     finds it) that NVML lists on GPU 0000:18:00.0 with 70 GiB: the idle
     node is drained with "gpudoctor: process.orphan orphan pid N (slurm job
     J ended) holds 70.0 GiB on GPU 0000:18:00.0"; once it is killed and the
     GPU empty, the node is resumed.

usage: slurm_test.py GPUDOCTOR FAKES_DIR [--sanitized]
Exit 77 (skipped) when not root, without Slurm or munge, or with --sanitized
(an ASan build: the daemons are not what is under test there).
"""
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
WRAPPER = os.path.join(SRC, "deploy", "slurm", "gpudoctor-healthcheck.sh")
EPILOG = os.path.join(SRC, "deploy", "slurm", "gpudoctor-epilog.sh")
SKIP = 77
INTERVAL_S = 2          # HealthCheckInterval: the drain latency is at most this
WAIT_S = 8 * INTERVAL_S + 10  # bound on every state change asserted below
NOBODY, DAEMON = "nobody", "daemon"  # the users the hostile jobs run as
TOOLS = ["munged", "mungekey", "munge", "unmunge", "slurmctld", "slurmd", "scontrol", "sinfo",
         "sbatch", "squeue", "setpriv"]
SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
FAKE_HELPER = os.path.join(SRC, "tests", "fakes", "fake_diag_helper.py")
LOST_GPU = "0000:5d:00.0"


def which(name):
    return shutil.which(name, path=SBIN_PATH)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenario(name):
    with open(os.path.join(SRC, "tests", "scenarios", name + ".json")) as f:
        sc = json.load(f)
    return os.path.join(SRC, "tests", "roots", sc["root"]), sc["fake"]


class Cluster:
    def __init__(self, gd, fakes, tmp):
        self.gd, self.fakes, self.d = gd, fakes, tmp
        self.host = socket.gethostname().split(".")[0]
        self.procs = []  # (name, Popen), stopped in reverse order
        self.env = dict(os.environ, SLURM_CONF=os.path.join(tmp, "slurm.conf"),
                        PATH=SBIN_PATH + ":" + os.environ.get("PATH", ""))
        self.munge_dir = os.path.join(tmp, "munge")
        self.socket = os.path.join(self.munge_dir, "socket")
        self.hc_log = os.path.join(tmp, "hc.log")

    def log(self, name):
        return open(os.path.join(self.d, "log", name), "ab")

    # --- munge --------------------------------------------------------------
    def start_munged(self):
        pw = pwd.getpwnam("munge")
        os.mkdir(self.munge_dir, 0o755)
        key = os.path.join(self.munge_dir, "munge.key")
        subprocess.run([which("mungekey"), "-c", "-k", key], check=True, capture_output=True)
        for path in (self.munge_dir, key):
            os.chown(path, pw.pw_uid, pw.pw_gid)

        # munged refuses to run as root with a munge-owned key (ci-recipes.md
        # pitfall 1): it runs as user munge, as Debian runs it.
        def as_munge():
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)

        m = self.munge_dir
        p = subprocess.Popen([which("munged"), "-F", "--socket", self.socket, "--key-file", key,
                              "--pid-file", m + "/munged.pid", "--seed-file", m + "/munged.seed"],
                             preexec_fn=as_munge, stdout=self.log("munged.log"),
                             stderr=subprocess.STDOUT)
        self.procs.append(("munged", p))
        self.wait_for("munged answers", self.munge_ok, 10)

    def munge_ok(self):
        cred = subprocess.run([which("munge"), "-S", self.socket, "-n"], capture_output=True,
                              stdin=subprocess.DEVNULL)
        if cred.returncode != 0:
            return False
        return subprocess.run([which("unmunge"), "-S", self.socket], input=cred.stdout,
                              capture_output=True).returncode == 0

    # --- slurm --------------------------------------------------------------
    def write_config(self):
        d = self.d
        gd_root, gd_fake = scenario("hgx-healthy")
        bad_root, bad_fake = scenario("xid79")
        fake_dir = os.path.join(SRC, "tests", "fakes", "scenarios")
        # slurmd runs this as root with nothing but SLURMD_NODENAME in the
        # environment (pitfall 2): everything it needs is spelled out here,
        # and the shipped wrapper adds PATH.
        # blip: the healthy machine whose NVML fails once, while {d}/blip
        # exists (the fake removes it as it fails): a transient "0 GPUs".
        with open(os.path.join(fake_dir, gd_fake + ".json")) as f:
            blip = json.load(f)
        blip["errors"] = dict(blip.get("errors", {}), nvmlInit_v2=999)
        blip["fail_once_file"] = {"nvmlInit_v2": os.path.join(d, "blip")}
        with open(os.path.join(d, "blip.json"), "w") as f:
            json.dump(blip, f)
        lost = json.loads(json.dumps(blip))
        lost.pop("errors")
        lost.pop("fail_once_file")
        next(g for g in lost["gpus"] if g["bus_id"] == LOST_GPU)["lost"] = True
        with open(os.path.join(d, "lost.json"), "w") as f:
            json.dump(lost, f)
        self.set_diag(True)
        # liveroot: the healthy recorded tree whose /proc gets this machine's
        # processes as links (hc.sh), and its /etc/passwd.
        live = os.path.join(d, "liveroot")
        shutil.copytree(gd_root, live, symlinks=True)
        os.makedirs(os.path.join(live, "etc"), exist_ok=True)
        for f in ("proc/uptime", "etc/passwd"):
            if os.path.lexists(os.path.join(live, f)):
                os.remove(os.path.join(live, f))
            os.symlink("/" + f, os.path.join(live, f))
        self.healthy_fake = blip
        with open(os.path.join(d, "hc.sh"), "w") as f:
            f.write(f"""#!/bin/sh
case "$(cat {d}/scenario)" in
  failing) root={bad_root}; fake={fake_dir}/{bad_fake}.json ;;
  blip) root={gd_root}; fake={d}/blip.json ;;
  lost) root={gd_root}; fake={d}/lost.json ;;
  busy|orphan)
    # The recorded machine, with this machine's processes: the workload
    # probe reads the job's /proc/PID, slurmd's and slurmstepd's through it.
    root={d}/liveroot; fake={d}/$(cat {d}/scenario).json
    find "$root/proc" -maxdepth 1 -type l -delete
    for p in /proc/[0-9]*; do [ -e "$root$p" ] || ln -s "$p" "$root$p"; done ;;
  *) root={gd_root}; fake={fake_dir}/{gd_fake}.json ;;
esac
export GPUDOCTOR_SLURM_ARGS="--slurm-recheck 1s --diag-helper {FAKE_HELPER}"
export SLURM_CONF={d}/slurm.conf GPUDOCTOR={self.gd} GPUDOCTOR_FAKE_SCENARIO=$fake
export GPUDOCTOR_FAKE_DIAG={d}/diag.json GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG={d}/contexts.log
{WRAPPER} --root "$root" --nvml-lib {self.fakes}/libnvidia-ml.so.1 \\
  --cuda-lib {self.fakes}/libcuda.so.1 --cudart-lib {self.fakes}/libcudart.so.13 \\
  >>{self.hc_log} 2>&1
echo "exit $?" >>{self.hc_log}
""")
        os.chmod(os.path.join(d, "hc.sh"), 0o755)
        # The Epilog: the shipped script with the test's directory and slurm.conf.
        os.makedirs(os.path.join(d, "watch"), mode=0o1777, exist_ok=True)
        os.chmod(os.path.join(d, "watch"), 0o1777)
        with open(os.path.join(d, "epilog.sh"), "w") as f:
            f.write(f"""#!/bin/sh
export GPUDOCTOR_WATCH_DIR={d}/watch SLURM_CONF={d}/slurm.conf
exec {EPILOG} 2>>{d}/epilog.log
""")
        os.chmod(os.path.join(d, "epilog.sh"), 0o755)
        self.set_scenario("healthy")
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(f"""ClusterName=gdtest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
MpiDefault=none
MailProg=/bin/true
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
HealthCheckProgram={d}/hc.sh
Epilog={d}/epilog.sh
HealthCheckInterval={INTERVAL_S}
HealthCheckNodeState=ANY
NodeName={self.host} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")

    def set_diag(self, passes):
        """The fake diag helper's answer: level 1 passed on every GPU asked
        for, or a crash."""
        if passes:
            with open(os.path.join(SRC, "tests", "diag", "scenarios",
                                   "healthy-2gpu-l1.json")) as f:
                l1 = json.load(f)
            one = [line for line in l1["lines"] if "$GPU1" not in json.dumps(line)]
            lines = [one[0]]
            for i in range(8):
                lines += [json.loads(json.dumps(line).replace("$GPU0", f"$GPU{i}"))
                          for line in one[1:]]
            scenario = dict(l1, lines=lines)
        else:
            scenario = {"then": "crash"}
        tmp = os.path.join(self.d, "diag.json.tmp")
        with open(tmp, "w") as f:
            json.dump(scenario, f)
        os.replace(tmp, os.path.join(self.d, "diag.json"))

    def set_scenario(self, word):
        tmp = os.path.join(self.d, "scenario.tmp")
        with open(tmp, "w") as f:
            f.write(word + "\n")
        os.replace(tmp, os.path.join(self.d, "scenario"))

    def start_slurm(self):
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.d, sub), exist_ok=True)
        self.write_config()
        self.start_munged()
        # Foreground (-D): the test's own children, stopped by their pids.
        for name, argv in (("slurmctld", [which("slurmctld"), "-D", "-i"]),
                           ("slurmd", [which("slurmd"), "-D"])):
            p = subprocess.Popen(argv, env=self.env, stdout=self.log(name + ".out"),
                                 stderr=subprocess.STDOUT, cwd=self.d)
            self.procs.append((name, p))
        self.wait_for("node idle", lambda: self.sinfo() == ("idle", "none"), 30)

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                print(f"{name} ignored SIGTERM: killed", file=sys.stderr)
                p.kill()
                p.wait()
        self.procs = []

    # --- observing ----------------------------------------------------------
    def run(self, *argv):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30)

    def run_as(self, pw, *argv):
        """As another user (pwd entry), as that user would run it."""
        setpriv = [which("setpriv"), f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}",
                   "--clear-groups"]
        return self.run(*setpriv, *argv)

    def sinfo(self):
        """(%T, %E): the node's state ("idle", "drained", "draining") and reason."""
        r = self.run(which("sinfo"), "-h", "-n", self.host, "-o", "%T|%E")
        if r.returncode != 0 or "|" not in r.stdout:
            return (None, None)
        state, reason = r.stdout.strip().split("|", 1)
        return state, reason

    def checks_done(self):
        """How many health checks have finished."""
        try:
            with open(self.hc_log) as f:
                return sum(1 for line in f if line.startswith("exit "))
        except FileNotFoundError:
            return 0

    def wait_for(self, what, cond, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            for name, p in self.procs:
                if p.poll() is not None:
                    raise AssertionError(f"{name} exited ({p.returncode}) while waiting: {what}")
            time.sleep(0.2)
        raise AssertionError(f"not within {timeout} s: {what}; sinfo says {self.sinfo()}")

    def wait_checks(self, n):
        start = self.checks_done()
        self.wait_for(f"{n} more health checks", lambda: self.checks_done() >= start + n,
                      (n + 2) * INTERVAL_S + 20)

    def dump_logs(self):
        for name in ("hc.log", "epilog.log", "log/slurmd.log", "log/slurmctld.log", "log/munged.log"):
            path = os.path.join(self.d, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    tail = f.readlines()[-25:]
                print(f"--- {name} (last {len(tail)} lines)\n" + "".join(tail), file=sys.stderr)


def user_home(c, user):
    """A directory of the user's own (not sticky: the kernel's
    protected_symlinks would otherwise stop root at the user's link, and
    the Epilog must hold without it)."""
    pw = pwd.getpwnam(user)
    home = os.path.join(c.d, "home-" + user)
    os.makedirs(home, exist_ok=True)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    return home, pw


def epilog_done(c, job):
    """The Epilog has run for the job: its summaries are gone."""
    def done():
        return (c.run(which("squeue"), "-h", "-j", job).stdout.strip() == "" and
                not [n for n in os.listdir(os.path.join(c.d, "watch")) if n.startswith(job + ".")])
    c.wait_for(f"job {job} ended and its Epilog ran", done, WAIT_S + 30)
    with open(os.path.join(c.d, "epilog.log")) as f:
        return [line for line in f if f"job {job}:" in line]


def hostile_job_name(c):
    """7. A job named to print "UserId=root(0)" in scontrol's first line,
    whose summary is a cron line and whose output file becomes a symlink to
    a root-owned file: the Epilog must write as the job's user, not root."""
    home, pw = user_home(c, NOBODY)
    target = os.path.join(c.d, "root-owned.conf")
    with open(target, "w") as f:
        f.write("# root's own file\n")
    os.chmod(target, 0o644)
    watch = os.path.join(c.d, "watch")
    script = ("echo '* * * * * root touch " + c.d + "/pwned' >" + watch + "/$SLURM_JOB_ID.0.0.txt; "
              "ln -sf " + target + " " + home + "/evil-$SLURM_JOB_ID.out")
    name = "x UserId=root(0) GroupId=root(0)"
    r = c.run_as(pw, which("sbatch"), "--parsable", "--job-name", name, "--chdir", home,
                 "--output", home + "/evil-%j.out", "--wrap", script)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    shown = c.run(which("scontrol"), "show", "job", job).stdout
    assert f"JobName={name}" in shown.splitlines()[0], shown  # the attack is real
    log = epilog_done(c, job)
    with open(target) as f:
        assert f.read() == "# root's own file\n", "the Epilog wrote into a root-owned file"
    assert any("could not append" in line and f"as uid {pw.pw_uid}" in line for line in log), log
    print(f"job {job} named {name!r}: the Epilog wrote as uid {pw.pw_uid}; the root-owned "
          "file behind its output symlink is unchanged")


def foreign_and_many_summaries(c):
    """8. 2,000 summaries of the job's user and one of another user under
    the job's id: the first 256 of the user's own are appended, in rank
    order, the other user's is not, and every one is removed."""
    home, pw = user_home(c, DAEMON)
    _, other = user_home(c, NOBODY)
    watch = os.path.join(c.d, "watch")
    script = ("echo victim; i=0; while [ $i -lt 2000 ]; do echo \"summary $i\" >" + watch +
              "/$SLURM_JOB_ID.0.$i.txt; i=$((i+1)); done; sleep 2")
    r = c.run_as(pw, which("sbatch"), "--parsable", "--chdir", home,
                 "--output", home + "/victim-%j.out", "--wrap", script)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    planted = c.run_as(other, "/bin/sh", "-c",
                       f"echo ATTACKER: appended to job {job} >{watch}/{job}.9.9.txt")
    assert planted.returncode == 0, planted.stderr
    log = epilog_done(c, job)
    with open(os.path.join(home, f"victim-{job}.out")) as f:
        lines = f.read().splitlines()
    assert lines == ["victim"] + [f"summary {i}" for i in range(256)], lines[:3] + lines[-3:]
    assert any(f"skipped 1 file(s) named {job}.*.txt not owned by uid {pw.pw_uid}" in line
               for line in log), log
    assert any("appended 256 of 2000 summaries" in line for line in log), log
    print(f"job {job}: 256 of its 2,000 summaries appended in rank order; another user's "
          "summary refused; all removed")


def write_fake(c, word, holders):
    """The healthy machine's fake with `holders` ({bus_id: (pid, bytes)})
    on its GPUs, exclusive-process mode on each busy one, as {d}/WORD.json."""
    fake = json.loads(json.dumps(c.healthy_fake))
    fake.pop("errors", None)
    fake.pop("fail_once_file", None)
    for g in fake["gpus"]:
        if g["bus_id"] in holders:
            pid, used = holders[g["bus_id"]]
            g["processes"] = [{"pid": pid, "used_memory_bytes": used}]
            g["memory_used_bytes"] = used
            g["compute_mode"] = 3
    tmp = os.path.join(c.d, word + ".json.tmp")
    with open(tmp, "w") as f:
        json.dump(fake, f)
    os.replace(tmp, os.path.join(c.d, word + ".json"))


def contexts(c):
    """The lines the fake libcuda wrote: one per context asked for."""
    try:
        with open(os.path.join(c.d, "contexts.log")) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def wait_file(c, path, what):
    c.wait_for(what, lambda: os.path.exists(path) and open(path).read().strip() != "", WAIT_S)
    return int(open(path).read().split()[0])


def busy_node(c):
    """9. A job on every GPU: the node stays allocated, no context is asked
    for, the job completes."""
    pid_file, stop = os.path.join(c.d, "busy.pid"), os.path.join(c.d, "busy.stop")
    out = os.path.join(c.d, "busy-%j.out")
    script = (f"echo $$ > {pid_file}; i=0; while [ ! -e {stop} ] && [ $i -lt 600 ]; do "
              f"sleep 0.2; i=$((i+1)); done; echo job-completed")
    r = c.run(which("sbatch"), "--parsable", "--output", out, "--wrap", script)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    pid = wait_file(c, pid_file, f"job {job} running")
    first = c.healthy_fake["gpus"][0]
    total = first.get("memory_total_bytes",
                      c.healthy_fake.get("gpu_defaults", {}).get("memory_total_bytes", 80 << 30))
    holders = {g["bus_id"]: (pid, total * 94 // 100) for g in c.healthy_fake["gpus"]}
    write_fake(c, "busy", holders)
    before = len(contexts(c))
    c.set_scenario("busy")
    c.wait_checks(3)
    state = c.sinfo()
    assert state[0] in ("allocated", "mixed") and state[1] == "none", state
    asked = contexts(c)[before:]
    assert asked == [], f"contexts asked for on a busy node: {asked[:5]}"
    open(stop, "w").close()
    c.set_scenario("healthy")
    path = out.replace("%j", job)
    c.wait_for(f"job {job} completed", lambda: os.path.exists(path) and
               "job-completed" in open(path).read(), WAIT_S)
    c.wait_for("idle after the job", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
    print(f"job {job} on all 8 GPUs (exclusive, 94 % full): node stayed {state[0]}, "
          f"0 contexts asked for, the job completed")


def orphan(c):
    """10. A process left behind by its job: drained with its pid and job;
    resumed once it is gone."""
    pid_file = os.path.join(c.d, "orphan.pid")
    out = os.path.join(c.d, "orphan-%j.out")
    # setsid: the leftover leaves the job's process tree, which is all that
    # proctrack/linuxproc kills at the job's end (as a daemonizing launcher does).
    script = f"setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}; echo started"
    r = c.run(which("sbatch"), "--parsable", "--output", out, "--wrap", script)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    pid = wait_file(c, pid_file, f"job {job} started its leftover")
    try:
        c.wait_for(f"job {job} ended", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
        os.kill(pid, 0)  # the leftover outlived its job
        bus = "0000:18:00.0"
        write_fake(c, "orphan", {bus: (pid, 70 << 30)})
        c.set_scenario("orphan")
        want = (f"gpudoctor: process.orphan orphan pid {pid} (slurm job {job} ended) holds "
                f"70.0 GiB on GPU {bus}")
        c.wait_for("drained for the orphan", lambda: c.sinfo()[0] in ("drained", "draining")
                   and c.sinfo()[1] == want, WAIT_S)
        print(f"job {job}'s leftover pid {pid} drained the idle node: {want}")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    c.set_scenario("healthy")
    c.wait_for("resumed once the orphan is gone", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
    print("the orphan killed: resumed")


def test(c):
    drained = "gpudoctor: gpu.fallen-off-bus GPU 0000:41:00.0"

    # 1. A GPU falls off the bus: drained with gpudoctor's reason.
    c.set_scenario("failing")
    t0 = time.monotonic()
    c.wait_for("drained by gpudoctor",
               lambda: c.sinfo()[0] in ("drained", "draining") and c.sinfo()[1] == drained,
               WAIT_S)
    print(f"drained in {time.monotonic() - t0:.1f} s: {c.sinfo()}")
    # Further failing checks leave it as it is.
    c.wait_checks(1)
    assert c.sinfo() == ("drained", drained), c.sinfo()

    # 2. The fault clears: gpudoctor resumes its own drain.
    c.set_scenario("healthy")
    t0 = time.monotonic()
    c.wait_for("resumed", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
    print(f"resumed in {time.monotonic() - t0:.1f} s")

    # 3. An admin's drain is never lifted nor relabelled, healthy or failing.
    r = c.run(which("scontrol"), "update", f"nodename={c.host}", "state=drain",
              "reason=admin: maintenance")
    assert r.returncode == 0, r.stderr
    for word in ("healthy", "failing"):
        c.set_scenario(word)
        c.wait_checks(2)
        assert c.sinfo() == ("drained", "admin: maintenance"), (word, c.sinfo())
    print("admin drain kept over two health checks, healthy and failing")
    r = c.run(which("scontrol"), "update", f"nodename={c.host}", "state=resume")
    assert r.returncode == 0, r.stderr

    # 4. NVML fails for one probe (a transient "0 GPUs"): re-checked a second
    #    later, it holds no more, and the node is not drained.
    c.wait_for("resumed after the admin", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
    blip = os.path.join(c.d, "blip")
    open(blip, "w").close()
    c.set_scenario("blip")
    c.wait_for("the blip consumed", lambda: not os.path.exists(blip), WAIT_S)
    c.wait_checks(2)
    assert c.sinfo() == ("idle", "none"), c.sinfo()
    c.set_scenario("healthy")
    print("a transient NVML failure re-checked, not drained")

    # 5. A GPU lost and returned: resumed only after the re-probe passes.
    lost = "gpudoctor: gpu.fallen-off-bus GPU " + LOST_GPU
    c.set_scenario("lost")
    c.wait_for("drained for the lost GPU", lambda: c.sinfo() == ("drained", lost), WAIT_S)
    c.set_diag(False)
    c.set_scenario("healthy")
    c.wait_checks(2)
    assert c.sinfo() == ("drained", lost), c.sinfo()
    c.set_diag(True)
    c.wait_for("resumed after the re-probe", lambda: c.sinfo() == ("idle", "none"), WAIT_S)
    print("a lost GPU drained the node; back, resumed only once its re-probe passed")

    # 6. A watched batch job: its summary lands in its own output file.
    root, fake = scenario("hgx-healthy")
    fake_path = os.path.join(SRC, "tests", "fakes", "scenarios", fake + ".json")
    out = os.path.join(c.d, "job-%j.out")
    step = (f"GPUDOCTOR_FAKE_SCENARIO={fake_path} {c.gd} run --watch --watch-interval 0.2 "
            f"--summary-file {c.d}/watch/$SLURM_JOB_ID.0.0.txt --root {root} "
            f"--nvml-lib {c.fakes}/libnvidia-ml.so.1 --cuda-lib {c.fakes}/libcuda.so.1 "
            f"--cudart-lib {c.fakes}/libcudart.so.13 -- sh -c 'echo training; sleep 1'")
    r = c.run(which("sbatch"), "--parsable", "--output", out, "--wrap", step)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    path = out.replace("%j", job)
    header = "gpudoctor run --watch on "  # the Epilog's part: the summary file's first line

    def appended():
        if not os.path.exists(path):
            return False
        text = open(path).read()
        return header in text and "job summary: sh exited with 0" in text.split(header, 1)[1]
    c.wait_for(f"job {job}'s summary appended to its output", appended, WAIT_S + 30)
    text = open(path).read()
    assert "training" in text, text
    epilog_done(c, job)  # the summaries removed once appended
    print(f"job {job}: the Epilog appended the watched summary to its output")

    hostile_job_name(c)
    foreign_and_many_summaries(c)
    busy_node(c)
    orphan(c)

    # What gpudoctor printed, one line per check, as slurmd would log it.
    with open(c.hc_log) as f:
        lines = [line for line in f if line.startswith("gpudoctor")]
    for want in ("drained: " + drained, "resumed: healthy again", "by someone else",
                 "re-checked after 1s: nvml.init-failed did not hold",
                 "healthy by the check, but re-probe failed on 0000:18:00.0: diag level 1: "
                 "crashed: SIGSEGV",
                 "proven by a re-probe of 8 GPUs (NVML, a CUDA context, diag level 1)"):
        assert any(want in line for line in lines), (want, lines[-10:])


def main():
    args = sys.argv[1:]
    if "--sanitized" in args:
        print("skipped: sanitized build")
        return SKIP
    positional = [a for a in args if not a.startswith("--")]
    gd, fakes = os.path.abspath(positional[0]), os.path.abspath(positional[1])
    if os.geteuid() != 0:
        print("skipped: needs root (slurmd, munged as user munge)")
        return SKIP
    missing = [t for t in TOOLS if which(t) is None]
    for user in ("munge", NOBODY, DAEMON):
        try:
            pwd.getpwnam(user)
        except KeyError:
            missing.append("user " + user)
    if missing:
        print("skipped: missing " + ", ".join(missing) + " (apt-get install slurm-wlm munge)")
        return SKIP
    # ctest's timeout sends SIGTERM: stop the daemons on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix="gd-slurm-")
    os.chmod(tmp, 0o755)  # munged (user munge) reaches its socket dir inside
    c = Cluster(gd, fakes, tmp)
    ok = False
    try:
        c.start_slurm()
        test(c)
        ok = True
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
    finally:
        c.stop()
        if not ok:
            c.dump_logs()
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
