#!/usr/bin/env python3
"""A stand-in for gpudoctor-diag (gpu/README.md), for tests without a GPU.

It answers from a scenario file named by $GPUDOCTOR_FAKE_DIAG, whatever its
command line says. Scenarios live in tests/diag/scenarios/*.json. Shape
(every key optional):

  {
    "lines": [ {...}, "raw text", ... ],  # objects: written as one JSON line;
                                          # strings: written verbatim + "\\n"
                                          # (garbage, half objects)
    "tail": "raw text",                   # written after the lines with NO
                                          # newline: output cut mid-line
    "stderr": ["line", ...],              # written to stderr before the lines
    "delay_ms": 0,                        # sleep before each line (the parent
                                          # samples NVML meanwhile)
    "then": "done",                       # how it ends:
                                          #   "done"    {"type":"done"}, exit 0
                                          #   "done:N"  {"type":"done"}, exit N
                                          #   "exit:N"  exit N, no done line
                                          #   "hang"    sleep forever (killed
                                          #             at the parent's deadline)
                                          #   "crash"   SIGSEGV itself
    "args_to": "/path/out.json"           # write {"argv": [...], "env": {...}}
                                          # there first: what the parent passed
  }

Any string "$GPU0", "$GPU1", ... in a line object (at any depth) becomes the
bus id of the first, second, ... --gpu argument (without its "@CPUS"); when
fewer --gpu were given, the defaults are the first GPUs of the fake NVML
scenario tests/fakes/scenarios/hgx-8xh100.json (0000:18:00.0, 0000:2a:00.0,
...), so a scenario works with and without a command line.

Without $GPUDOCTOR_FAKE_DIAG it exits 3 with one line on stderr.

With $GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG set, it appends "<pid> <bus_id> diag"
to that file for each GPU it tests (its --gpu arguments, else the defaults
above), one O_APPEND write per line, as the fake libcuda logs each context
(tests/fakes/scenario.h): a test counts every context gpudoctor caused.
"""
import json
import os
import signal
import sys
import time

DEFAULT_GPUS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]


def gpus_from_argv(argv):
    gpus = []
    for i, a in enumerate(argv):
        if a == "--gpu" and i + 1 < len(argv):
            gpus.append(argv[i + 1].split("@", 1)[0])
        elif a.startswith("--gpu="):
            gpus.append(a[len("--gpu="):].split("@", 1)[0])
    return gpus


def substitute(value, gpus):
    if isinstance(value, str):
        if value.startswith("$GPU") and value[4:].isdigit():
            i = int(value[4:])
            if i < len(gpus):
                return gpus[i]
            if i < len(DEFAULT_GPUS):
                return DEFAULT_GPUS[i]
        return value
    if isinstance(value, list):
        return [substitute(v, gpus) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, gpus) for k, v in value.items()}
    return value


def log_contexts(gpus):
    path = os.environ.get("GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG")
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for bus in gpus or DEFAULT_GPUS:
            os.write(fd, ("%d %s diag\n" % (os.getpid(), bus)).encode())
    finally:
        os.close(fd)


def write(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def main():
    path = os.environ.get("GPUDOCTOR_FAKE_DIAG")
    if not path:
        sys.stderr.write("fake_diag_helper: $GPUDOCTOR_FAKE_DIAG is not set\n")
        return 3
    with open(path, encoding="utf-8") as f:
        scenario = json.load(f)
    argv = sys.argv[1:]
    if scenario.get("args_to"):
        with open(scenario["args_to"], "w", encoding="utf-8") as f:
            json.dump({"argv": argv, "env": dict(os.environ)}, f)
    for line in scenario.get("stderr", []):
        sys.stderr.write(line + "\n")
    sys.stderr.flush()

    gpus = gpus_from_argv(argv)
    log_contexts(gpus)
    delay_s = scenario.get("delay_ms", 0) / 1000.0
    for line in scenario.get("lines", []):
        if delay_s > 0:
            time.sleep(delay_s)
        if isinstance(line, str):
            write(line + "\n")
        else:
            write(json.dumps(substitute(line, gpus), separators=(",", ":")) + "\n")
    if "tail" in scenario:
        write(scenario["tail"])

    then = scenario.get("then", "done")
    if then == "hang":
        while True:
            time.sleep(3600)
    if then == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(10)  # the signal is delivered before this returns
        return 99
    if then.startswith("exit:"):
        return int(then[5:])
    if then == "done" or then.startswith("done:"):
        write('{"type":"done"}\n')
        return int(then[5:]) if then.startswith("done:") else 0
    sys.stderr.write("fake_diag_helper: unknown \"then\": %s\n" % then)
    return 3


if __name__ == "__main__":
    sys.exit(main())
