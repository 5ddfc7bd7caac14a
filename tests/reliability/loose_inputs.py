#!/usr/bin/env python3
"""Loose inputs (issue 20, "Smaller" 7 and 11), through the real binary:
non-finite numbers are refused with their range, terminal escapes in a log
or pasted text reach the terminal escaped, and credentials never reach a
snapshot, by name or pasted into an allowed variable.

usage: loose_inputs.py GPUDOCTOR [-k NAME]"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import run_tests, take_k  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GD = None
SNAPSHOT = os.path.join(SRC, "tests", "snapshots", "ws-4x4090.json")
ESC = "\x1b"


def gd(*args, env=None, stdin=None):
    return subprocess.run([GD] + list(args), capture_output=True, text=True, timeout=30,
                          env=env, input=stdin)


def test_non_finite_numbers_are_refused_with_their_range(tmp):
    for value in ("nan", "inf", "-inf", "1e999", "0"):
        p = gd("check", "--from", SNAPSHOT, "--deadline", value)
        assert p.returncode == 64, (value, p.returncode, p.stderr)
        assert "a finite number in [0.1, 600]" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = gd("diag", "--list-tests", "--duration", "nan")
    assert p.returncode == 64 and "[1, 3600]" in p.stderr, p.stderr
    for seed in ("99999999999999999999999", "-1", "1e3"):
        p = gd("diag", "--list-tests", "--seed", seed)
        assert p.returncode == 64 and "whole number in [0, 18446744073709551615]" in p.stderr, \
            (seed, p.stderr)
    assert gd("diag", "--list-tests", "--seed", "18446744073709551615").returncode == 0


def test_since_is_one_parser_for_logs_and_history(tmp):
    log = os.path.join(SRC, "tests", "logs", "dmesg-xid79.txt")
    for when in ("yesterday", "today", "2h", "2026-03-01", "2026-03-01T14:00:05Z"):
        p = gd("logs", "--from", log, "--since", when)
        assert p.returncode == 0, (when, p.stderr)
    for command in (["logs", "--from", log], ["history", "--history", os.path.join(tmp, "h.db")]):
        p = gd(*command, "--since", "soon")
        assert p.returncode == 64, (command, p.stderr)
        assert p.stderr.count("--since") == 1 and "yesterday" in p.stderr, p.stderr


def test_log_lines_reach_the_terminal_escaped(tmp):
    log = os.path.join(tmp, "esc.log")
    with open(log, "w") as f:
        f.write("[  12.345678] NVRM: Xid (PCI:0000:17:00): 79, pid=123, name=" + ESC +
                "[31mevil" + ESC + "]0;title\x07, GPU has fallen off the bus.\n")
    p = gd("logs", "--from", log)
    assert p.returncode in (0, 1, 2), p.stderr
    assert "Xid 79" in p.stdout, p.stdout
    assert ESC not in p.stdout and "\x07" not in p.stdout, repr(p.stdout)
    assert "\\x1b[31mevil" in p.stdout, p.stdout


def test_pasted_text_reaches_the_terminal_escaped(tmp):
    text = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). " + ESC + "[2J" +
            "Error 2: out of memory\n")
    p = gd("explain", "-", stdin=text)
    assert ESC not in p.stdout, repr(p.stdout)
    assert "memory.address-space-limit" in p.stdout or "cuda" in p.stdout, p.stdout


def test_credentials_never_reach_a_snapshot(tmp):
    token = "ghp_" + "a1b2" * 9
    env = {"PATH": "/usr/bin:/bin", "SLURM_JWT": "eyJ-slurm-jwt", "GITHUB_PAT": token,
           "nccl_auth_token": "lower-case-secret", "SLURM_JOB_ID": "4242",
           "CUDA_VISIBLE_DEVICES": token, "NCCL_DEBUG": "INFO"}
    out = os.path.join(tmp, "s.json")
    p = gd("snapshot", "-o", out, "--root", os.path.join(SRC, "tests", "roots", "ws-4x4090"),
           "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--cuda-lib", "/nonexistent/libcuda.so.1",
           env=env)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        text = f.read()
    for secret in ("eyJ-slurm-jwt", token, "lower-case-secret"):
        assert secret not in text, secret
    vars_ = json.loads(text)["env"]["vars"]
    assert vars_["CUDA_VISIBLE_DEVICES"] == "<redacted: 40 chars>", vars_
    assert vars_["SLURM_JOB_ID"] == "4242" and vars_["NCCL_DEBUG"] == "INFO", vars_
    assert not any(k in vars_ for k in ("SLURM_JWT", "GITHUB_PAT", "nccl_auth_token")), vars_


def test_pasted_credentials_never_reach_a_report(tmp):
    token = "ghp_" + "a1b2" * 9
    text = ("SLURM_JWT=eyJ-slurm-jwt\nexport NCCL_AUTH_TOKEN=nccl-secret\n"
            "CUDA_VISIBLE_DEVICES=" + token + "\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n")
    p = gd("explain", "-", "--json", stdin=text)
    for secret in ("eyJ-slurm-jwt", "nccl-secret", token):
        assert secret not in p.stdout, secret


def main():
    global GD
    args = sys.argv[1:]
    only = take_k(args)
    if len(args) != 1:
        sys.exit(__doc__)
    GD = os.path.abspath(args[0])
    return run_tests(globals(), only, tmp_prefix="gd-loose-")


if __name__ == "__main__":
    sys.exit(main())
