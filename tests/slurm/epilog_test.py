#!/usr/bin/env python3
"""The shipped Slurm Epilog (deploy/slurm/gpudoctor-epilog.sh) refuses what
a job's user could have arranged, run directly as slurmd runs it: as root,
with SLURM_JOB_ID, SLURM_JOB_UID and SLURM_JOB_GID and nothing else.

What a real Slurm must decide (a hostile job name, another user's summary,
2,000 summaries) is in tests/slurm/slurm_test.py; this holds the checks made
before Slurm is asked anything, on every machine where the test runs as root:

  1. the watch directory a symlink: refused, the files it leads to kept;
  2. the directory not root's, or not sticky: refused, nothing removed;
  3. no SLURM_JOB_UID: nothing appended, the job's summaries removed;
  4. scontrol that cannot answer (no slurm.conf): nothing appended;
  5. a job id that is not a number ("../x"): nothing done at all.

usage: epilog_test.py
Exit 77 (skipped) when not root: the directory's owner and the ids slurmd
passes cannot be made otherwise. The skip says so.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
EPILOG = os.path.join(SRC, "deploy", "slurm", "gpudoctor-epilog.sh")
NOBODY = 65534
SKIP = 77


def epilog(watch, job="42", uid=str(NOBODY), gid=str(NOBODY), tmp="/"):
    env = {"SLURM_JOB_ID": job, "GPUDOCTOR_WATCH_DIR": watch,
           # An empty slurm.conf: scontrol fails at once and the Slurm part
           # cannot answer, as on a node whose controller is down. (A missing
           # one makes scontrol look for the controller in DNS for a minute.)
           "SLURM_CONF": os.path.join(tmp, "empty-slurm.conf")}
    if uid is not None:
        env["SLURM_JOB_UID"] = uid
    if gid is not None:
        env["SLURM_JOB_GID"] = gid
    r = subprocess.run(["/bin/sh", EPILOG], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r.stderr


def summary(watch, name, text="summary\n", owner=NOBODY):
    path = os.path.join(watch, name)
    with open(path, "w") as f:
        f.write(text)
    os.chown(path, owner, owner)
    return path


def watch_dir(tmp, name, mode=0o1777, owner=0):
    path = os.path.join(tmp, name)
    os.mkdir(path)
    os.chmod(path, mode)
    os.chown(path, owner, owner)
    return path


def test(tmp):
    # 1. A symlinked directory: nothing in the directory it names is touched.
    real = watch_dir(tmp, "real")
    kept = summary(real, "42.0.0.txt")
    link = os.path.join(tmp, "link")
    os.symlink(real, link)
    err = epilog(link, tmp=tmp)
    assert "refused" in err and "symlink" in err, err
    assert os.path.exists(kept), "a symlinked directory must not be cleaned"
    print("1. a symlinked watch directory: refused, its files kept")

    # 2. Not root's, or not sticky: another user could replace what is in it.
    for name, mode, owner, why in (("users", 0o1777, NOBODY, "owner uid 65534"),
                                   ("loose", 0o777, 0, "mode 777")):
        d = watch_dir(tmp, name, mode, owner)
        f = summary(d, "42.0.0.txt")
        err = epilog(d, tmp=tmp)
        assert "refused" in err and why in err and "sticky" in err, (name, err)
        assert os.path.exists(f), (name, "nothing removed from a refused directory")
    print("2. a directory not root's or not sticky: refused, nothing removed")

    # 3. No ids from slurmd: nothing appended, and the summaries go.
    d = watch_dir(tmp, "noids")
    f = summary(d, "42.0.0.txt")
    err = epilog(d, uid=None, gid=None, tmp=tmp)
    assert "no SLURM_JOB_UID/SLURM_JOB_GID" in err, err
    assert not os.path.exists(f), "the ended job's summary is removed"
    print("3. no SLURM_JOB_UID: nothing appended, the summary removed")

    # 4. scontrol cannot answer: the owner cannot be cross-checked.
    d = watch_dir(tmp, "noslurm")
    f = summary(d, "42.0.0.txt")
    other = summary(d, "43.0.0.txt")
    err = epilog(d, tmp=tmp)
    assert "scontrol show job 42 gave no UserId" in err and "nothing appended" in err, err
    assert not os.path.exists(f), "the ended job's summary is removed"
    assert os.path.exists(other), "another job's summary is not this job's to remove"
    print("4. scontrol without an answer: nothing appended; only this job's file removed")

    # 5. A job id that is no number: not even a glob is made of it.
    d = watch_dir(tmp, "badid")
    f = summary(d, "42.0.0.txt")
    err = epilog(d, job="*", tmp=tmp)
    assert err == "", err
    assert os.path.exists(f)
    print("5. a job id that is not a number: nothing done")


def main():
    if os.geteuid() != 0:
        print("skipped: needs root (a root-owned watch directory, files of another uid)")
        return SKIP
    for tool in ("setpriv", "find", "stat", "timeout"):
        if shutil.which(tool) is None:
            print(f"FAIL: {tool} missing; the Epilog needs it", file=sys.stderr)
            return 1
    tmp = tempfile.mkdtemp(prefix="gd-epilog-")
    open(os.path.join(tmp, "empty-slurm.conf"), "w").close()
    try:
        test(tmp)
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
