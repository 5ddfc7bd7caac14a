#!/usr/bin/env python3
"""devnodes.rootless-denied against a real user namespace and real device nodes.

A rootless container is a user namespace whose root is an ordinary user
outside. This test makes one (setpriv to nobody, then `unshare
--map-root-user`: root inside is uid 65534 outside) and gives it a tree
with two real character devices (mknod c 1 3, /dev/null's numbers: opening
them is harmless) owned by the host's root. Inside, the kernel shows their
owner as 65534 (unmapped) and lets root there use only their "other" bits:

  - mode 0660: `gpudoctor check --root TREE` says devnodes.rootless-denied
    (fail), and the kernel agrees: opening a node read-write fails;
  - mode 0666: it says the namespace can open them (ok), the kernel opens
    them, and access(2), asked of every node the mode bits allow, refuses
    none (devnodes.selinux-denied ok).

The tree's /proc/self/uid_map and /proc/self/status are links to the live
ones, so the probe reads the namespace it runs in. Needs root (mknod, setpriv)
and user namespaces; exits 77 (skipped) where either is missing.

usage: user_namespace.py GPUDOCTOR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def in_namespace(argv):
    """argv run as root of a user namespace owned by nobody."""
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            "unshare", "--map-root-user"] + argv


def findings(gd, tree):
    p = subprocess.run(in_namespace([gd, "check", "--root", tree, "--json"]),
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1, 2):
        sys.exit("gpudoctor check failed (%d): %s" % (p.returncode, p.stderr[-400:]))
    return {f["id"]: f for f in json.loads(p.stdout)["findings"]}


def kernel_opens(node):
    """Whether root in the namespace may open the node for reading and writing."""
    p = subprocess.run(in_namespace(["sh", "-c", ': <> "$0"', node]), capture_output=True,
                       text=True, timeout=30)
    return p.returncode == 0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    gd = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("SKIP: needs root (mknod, setpriv)")
        return SKIP
    for tool in ("setpriv", "unshare"):
        if shutil.which(tool) is None:
            print("SKIP: %s is not installed" % tool)
            return SKIP
    top = tempfile.mkdtemp(prefix="gd-userns-")
    try:
        os.chmod(top, 0o755)
        tree = os.path.join(top, "tree")
        os.makedirs(os.path.join(tree, "dev"))
        os.makedirs(os.path.join(tree, "proc", "self"))
        for name in ("uid_map", "status"):
            os.symlink("/proc/self/" + name, os.path.join(tree, "proc", "self", name))
        nodes = [os.path.join(tree, "dev", n) for n in ("nvidiactl", "nvidia0")]
        for n in nodes:
            os.mknod(n, 0o600 | 0o020000, os.makedev(1, 3))  # S_IFCHR
        for d, _, _ in os.walk(top):
            os.chmod(d, 0o755)
        try:  # a nodev mount (a tmpfs /tmp) refuses every device node, even to root
            os.close(os.open(nodes[0], os.O_RDWR))
        except OSError as e:
            print("SKIP: device nodes cannot be opened under %s: %s" % (top, e))
            return SKIP
        probe = subprocess.run(in_namespace(["cat", "/proc/self/uid_map"]), capture_output=True,
                               text=True, timeout=30)
        if probe.returncode != 0:
            print("SKIP: no user namespace for nobody here: " + probe.stderr.strip()[:200])
            return SKIP

        problems = []
        for n in nodes:
            os.chmod(n, 0o660)
        fs = findings(gd, tree)
        rootless = fs.get("devnodes.rootless-denied", {})
        if rootless.get("severity") != "fail":
            problems.append("mode 0660: devnodes.rootless-denied is %s, want fail: %s"
                            % (rootless.get("severity"), rootless.get("summary")))
        for n in ("/dev/nvidiactl", "/dev/nvidia0"):
            if not any(e.startswith(n + ": mode 0660 owner uid 65534 gid 65534")
                       for e in rootless.get("evidence", [])):
                problems.append("mode 0660: no evidence line for %s: %s"
                                % (n, rootless.get("evidence")))
        if not any(e.startswith("/proc/self/uid_map: 0 65534 1")
                   for e in rootless.get("evidence", [])):
            problems.append("mode 0660: the namespace's uid_map is not shown")
        if kernel_opens(nodes[0]):
            problems.append("mode 0660: the kernel opened the node; the premise is wrong")

        for n in nodes:
            os.chmod(n, 0o666)
        fs = findings(gd, tree)
        for fid in ("devnodes.rootless-denied", "devnodes.selinux-denied"):
            sev = fs.get(fid, {}).get("severity")
            if sev != "ok":
                problems.append("mode 0666: %s is %s, want ok: %s"
                                % (fid, sev, fs.get(fid, {}).get("summary")))
        if not kernel_opens(nodes[0]):
            problems.append("mode 0666: the kernel refused to open the node")

        for p in problems:
            print("FAIL " + p)
        print("user_namespace: %s" % ("ok" if not problems else "%d problem(s)" % len(problems)))
        return 1 if problems else 0
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
