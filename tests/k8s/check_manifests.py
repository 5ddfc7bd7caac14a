#!/usr/bin/env python3
"""Checks deploy/kubernetes/ without a cluster (docs/kubernetes.md).

Structural, not schema validation (no Kubernetes JSON schemas offline):
 - every YAML document parses and each object has apiVersion, kind and
   metadata.name; each kustomization lists files that exist, and every
   top-level manifest is either listed or named optional here;
 - `kubectl kustomize` builds each kustomization, where kubectl is installed;
 - the gpudoctor DaemonSets keep the securityContext docs/kubernetes.md
   states: no privilege, no escalation, read-only root filesystem, every
   capability dropped and none added, RuntimeDefault seccomp, no service
   account token, the nvidia runtime class; every hostPath mount is
   read-only except the history and NFD feature directories;
 - probes GET /healthz on the container port the --listen flag opens, and
   the Prometheus annotations name that port;
 - every gpudoctor command line in the manifests and in the NPD plugin
   config uses only flags that `gpudoctor <command> --help` lists;
 - the NPD plugin config parses as NPD reads it (custom plugin, durations,
   rule timeouts within the global one, a default condition for each
   permanent rule, max_output_length at least gpudoctor's 80 bytes);
 - the NPD rule's and the NFD labeller's gpudoctor commands, run for real
   on recorded snapshots (--from instead of the host), answer as NPD and
   NFD expect: exit 0/1 with one line within max_output_length; exit 0 and a
   feature file of valid labels.

usage: check_manifests.py GPUDOCTOR
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DEPLOY = os.path.join(SRC, "deploy", "kubernetes")
SNAPSHOTS = os.path.join(SRC, "tests", "snapshots")

# Top-level manifests deliberately outside kustomization.yaml's resources.
OPTIONAL = {"servicemonitor.yaml"}
# Host paths a gpudoctor container may write: its history, NFD's features.d.
WRITABLE_HOST_PATHS = {"/var/lib/gpudoctor", "/etc/kubernetes/node-feature-discovery/features.d"}
NPD_MAX_MESSAGE = 80  # src/report/npd.h kNpdMaxMessage
NPD_PLUGIN_KEYS = {"invoke_interval", "timeout", "max_output_length", "concurrency",
                   "enable_message_change_based_condition_update", "skip_initial_status"}
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

failures = []


def fail(msg):
    failures.append(msg)


def go_duration_s(text):
    """Go's time.ParseDuration for the forms NPD configs use ("1m30s", "45s")."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * scale[u] for n, u in parts)


def help_flags(gd, command, cache={}):
    """The long and short flags `gpudoctor COMMAND --help` lists."""
    if command not in cache:
        r = subprocess.run([gd, command, "--help"], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            fail(f"`gpudoctor {command} --help` exited {r.returncode}: {r.stderr.strip()}")
        cache[command] = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", r.stdout))
    return cache[command]


def check_gpudoctor_args(gd, where, argv):
    """argv: the words after the gpudoctor binary."""
    if not argv:
        fail(f"{where}: gpudoctor without a command")
        return
    command, rest = argv[0], argv[1:]
    known = help_flags(gd, command)
    for word in rest:
        if word.startswith("-") and not re.fullmatch(r"-?\d+(\.\d+)?", word):
            flag = word.split("=", 1)[0]
            if flag not in known:
                fail(f"{where}: `gpudoctor {command}` has no flag {flag} (see {command} --help)")


def gpudoctor_invocations(words):
    """Each gpudoctor command in a word list: the words after the binary,
    up to a shell separator."""
    out = []
    for i, w in enumerate(words):
        if os.path.basename(w) == "gpudoctor":
            cmd = []
            for x in words[i + 1:]:
                if x in (";", "&&", "||", "|", "do", "done"):
                    break
                cmd.append(x)
            out.append(cmd)
    return out


def container_words(c):
    """The container's command line as words, shell scripts split too."""
    words = list(c.get("command", [])) + list(c.get("args", []))
    if words[:2] in (["/bin/sh", "-c"], ["sh", "-c"], ["/bin/bash", "-c"]):
        script = " ".join(words[2:]).replace("\n", " ; ")
        return shlex.split(script.replace(";", " ; "))
    if not c.get("command"):
        return ["gpudoctor"] + words  # the image's entrypoint is gpudoctor
    return words


def load_manifests():
    docs = []
    for dirpath, _, files in os.walk(DEPLOY):
        for f in sorted(files):
            if not f.endswith((".yaml", ".yml")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, DEPLOY)
            try:
                with open(path) as fh:
                    for doc in yaml.safe_load_all(fh):
                        if doc is not None:
                            docs.append((rel, doc))
            except yaml.YAMLError as e:
                fail(f"{rel}: does not parse: {e}")
    return docs


def check_object_basics(rel, doc):
    if not isinstance(doc, dict):
        fail(f"{rel}: a document that is not a mapping")
        return
    for key in ("apiVersion", "kind"):
        if not doc.get(key):
            fail(f"{rel}: an object without {key}")
    if doc.get("kind") == "Kustomization":
        return  # kustomize's own file: no metadata
    if not (doc.get("metadata") or {}).get("name"):
        fail(f"{rel}: {doc.get('kind')} without metadata.name")


def check_kustomization(rel, doc):
    base = os.path.dirname(os.path.join(DEPLOY, rel))
    listed = set()
    for r in doc.get("resources", []):
        listed.add(r)
        if not os.path.exists(os.path.join(base, r)):
            fail(f"{rel}: resource {r} does not exist")
    for gen in doc.get("configMapGenerator", []):
        for f in gen.get("files", []):
            if not os.path.exists(os.path.join(base, f.split("=", 1)[-1])):
                fail(f"{rel}: configMapGenerator file {f} does not exist")
    for f in sorted(os.listdir(base)):
        if f.endswith(".yaml") and f != "kustomization.yaml" and f not in listed \
                and f not in OPTIONAL and not f.endswith("-patch.yaml"):
            fail(f"{rel}: {f} is neither listed in resources nor optional")
    if shutil.which("kubectl"):
        r = subprocess.run(["kubectl", "kustomize", base], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            fail(f"{rel}: kubectl kustomize fails: {r.stderr.strip()}")
        else:
            for d in yaml.safe_load_all(r.stdout):
                if d is not None:
                    check_object_basics(rel + " (built)", d)


def listen_port(args):
    for i, a in enumerate(args):
        if a == "--listen" and i + 1 < len(args):
            return int(args[i + 1].rsplit(":", 1)[1])
        if a.startswith("--listen="):
            return int(a.rsplit(":", 1)[1])
    return 9835  # serve's default


def check_probe(where, probe, ports):
    if not probe:
        return
    get = probe.get("httpGet") or {}
    if get.get("path") != "/healthz":
        fail(f"{where}: probe path {get.get('path')}, expected /healthz")
    port = get.get("port")
    number = ports.get(port, port)
    if number not in ports.values():
        fail(f"{where}: probe port {port} is not a container port")
    return number


def check_daemonset(gd, rel, ds):
    name = ds["metadata"]["name"]
    where = f"{rel}: DaemonSet {name}"
    spec = ds.get("spec", {}).get("template", {}).get("spec", {})
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    ours = name.startswith("gpudoctor")
    if ours:
        if spec.get("automountServiceAccountToken") is not False:
            fail(f"{where}: automountServiceAccountToken must be false")
        if spec.get("runtimeClassName") != "nvidia":
            fail(f"{where}: runtimeClassName must be nvidia (docs/kubernetes.md)")
        if (spec.get("securityContext", {}).get("seccompProfile") or {}).get("type") \
                != "RuntimeDefault":
            fail(f"{where}: pod seccompProfile must be RuntimeDefault")
        if spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"):
            fail(f"{where}: no host namespaces")
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        cwhere = f"{where} container {c['name']}"
        for m in c.get("volumeMounts", []):
            v = volumes.get(m["name"])
            if v is None:
                if ours:
                    fail(f"{cwhere}: mount {m['name']} has no volume")
                continue
            hp = v.get("hostPath")
            if hp and not m.get("readOnly") and hp["path"] not in WRITABLE_HOST_PATHS:
                fail(f"{cwhere}: hostPath {hp['path']} mounted writable")
        if not ours:
            continue
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            fail(f"{cwhere}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            fail(f"{cwhere}: allowPrivilegeEscalation must be false")
        if sc.get("readOnlyRootFilesystem") is not True:
            fail(f"{cwhere}: readOnlyRootFilesystem must be true")
        caps = sc.get("capabilities") or {}
        if caps.get("drop") != ["ALL"]:
            fail(f"{cwhere}: capabilities must drop ALL")
        if caps.get("add"):
            fail(f"{cwhere}: adds capabilities {caps['add']} (docs/kubernetes.md says none)")
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        if env.get("NVIDIA_VISIBLE_DEVICES") != "all":
            fail(f"{cwhere}: NVIDIA_VISIBLE_DEVICES must be all")
        if "memory" not in (c.get("resources", {}).get("limits") or {}):
            fail(f"{cwhere}: no memory limit")
        words = container_words(c)
        calls = gpudoctor_invocations(words)
        if not calls:
            fail(f"{cwhere}: runs no gpudoctor command")
        for call in calls:
            check_gpudoctor_args(gd, cwhere, call)
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        serve = [call for call in calls if call and call[0] == "serve"]
        if serve:
            port = listen_port(serve[0])
            if port not in ports.values():
                fail(f"{cwhere}: --listen port {port} is not a container port")
            for kind in ("livenessProbe", "readinessProbe"):
                if not c.get(kind):
                    fail(f"{cwhere}: no {kind}")
                elif check_probe(f"{cwhere} {kind}", c[kind], ports) != port:
                    fail(f"{cwhere}: {kind} does not probe the --listen port {port}")
            ann = ds["spec"]["template"].get("metadata", {}).get("annotations", {})
            if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != \
                    str(port) or ann.get("prometheus.io/path") != "/metrics":
                fail(f"{where}: Prometheus annotations do not match port {port} /metrics")


def run_real(argv, timeout=120):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})


def without_root(args):
    """The args with --root DIR dropped: the tests read snapshots instead."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--root":
            skip = True
            continue
        if not a.startswith("--root="):
            out.append(a)
    return out


def check_npd_config(gd, rel, path):
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{rel}: does not parse: {e}")
        return
    if cfg.get("plugin") != "custom":
        fail(f"{rel}: plugin must be \"custom\"")
    pc = cfg.get("pluginConfig", {})
    for k in pc:
        if k not in NPD_PLUGIN_KEYS:
            fail(f"{rel}: unknown pluginConfig key {k}")
    glob_timeout = go_duration_s(pc.get("timeout", "5s"))
    if glob_timeout is None or go_duration_s(pc.get("invoke_interval", "30s")) is None:
        fail(f"{rel}: timeout/invoke_interval are not Go durations")
        glob_timeout = 0
    max_out = pc.get("max_output_length", 80)
    if max_out < NPD_MAX_MESSAGE:
        fail(f"{rel}: max_output_length {max_out} would cut gpudoctor's {NPD_MAX_MESSAGE}-byte line")
    conditions = {c["type"] for c in cfg.get("conditions", [])}
    if not cfg.get("source"):
        fail(f"{rel}: no source")
    for i, rule in enumerate(cfg.get("rules", [])):
        where = f"{rel} rule {i}"
        if rule.get("type") not in ("temporary", "permanent"):
            fail(f"{where}: type {rule.get('type')}")
        if rule.get("type") == "permanent" and rule.get("condition") not in conditions:
            fail(f"{where}: permanent rule's condition {rule.get('condition')} has no default")
        if not rule.get("reason"):
            fail(f"{where}: no reason")
        t = go_duration_s(rule.get("timeout", pc.get("timeout", "5s")))
        if t is None or t > glob_timeout:
            fail(f"{where}: timeout {rule.get('timeout')} is not within the global {glob_timeout}s")
        words = [rule.get("path", "")] + rule.get("args", [])
        calls = gpudoctor_invocations(words)
        if not calls:
            fail(f"{where}: does not run gpudoctor")
        for call in calls:
            check_gpudoctor_args(gd, where, call)
            # As NPD would run it, on recorded machines instead of the host.
            for snap in ("ws-4x4090.json", "module-load-failed.json"):
                argv = [gd] + without_root(call) + ["--from", os.path.join(SNAPSHOTS, snap)]
                r = run_real(argv)
                line = r.stdout.strip()
                if r.returncode not in (0, 1) or "\n" in line or len(line) > max_out \
                        or not line.startswith("gpudoctor: "):
                    fail(f"{where} on {snap}: exit {r.returncode}, output {r.stdout!r} "
                         f"{r.stderr!r}")


def check_labeller_runs(gd, rel, ds):
    for c in ds["spec"]["template"]["spec"]["containers"]:
        for call in gpudoctor_invocations(container_words(c)):
            if not call or call[0] != "labels":
                continue
            with tempfile.TemporaryDirectory() as tmp:
                args = without_root(call)
                i = args.index("--nfd-dir")
                args[i + 1] = tmp
                r = run_real([gd] + args + ["--from", os.path.join(SNAPSHOTS, "ws-4x4090.json")])
                path = os.path.join(tmp, "gpudoctor")
                if r.returncode != 0 or not os.path.exists(path):
                    fail(f"{rel}: labeller command exits {r.returncode}: {r.stderr.strip()}")
                    continue
                if sorted(os.listdir(tmp)) != ["gpudoctor"]:
                    fail(f"{rel}: labeller leaves {sorted(os.listdir(tmp))} in features.d")
                with open(path) as f:
                    for line in f.read().splitlines():
                        if line.startswith("#"):
                            continue
                        name, _, value = line.partition("=")
                        prefix, _, short = name.rpartition("/")
                        if not (LABEL_PREFIX.match(prefix) and short and LABEL_VALUE.match(short)
                                and len(short) <= 63 and LABEL_VALUE.match(value)
                                and len(value) <= 63):
                            fail(f"{rel}: labeller writes an invalid label line {line!r}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    gd = os.path.abspath(sys.argv[1])
    docs = load_manifests()
    if not docs:
        fail("no manifests under deploy/kubernetes")
    for rel, doc in docs:
        check_object_basics(rel, doc)
        if not isinstance(doc, dict):
            continue
        if doc.get("kind") == "Kustomization":
            check_kustomization(rel, doc)
        elif doc.get("kind") == "DaemonSet":
            check_daemonset(gd, rel, doc)
            if doc["metadata"]["name"] == "gpudoctor-nfd-labeller":
                check_labeller_runs(gd, rel, doc)
    kinds = {(d.get("kind"), (d.get("metadata") or {}).get("name")) for _, d in docs
             if isinstance(d, dict)}
    for want in [("DaemonSet", "gpudoctor"), ("DaemonSet", "gpudoctor-nfd-labeller"),
                 ("DaemonSet", "node-problem-detector"), ("ServiceMonitor", "gpudoctor")]:
        if want not in kinds:
            fail(f"missing {want[0]} {want[1]}")
    npd = os.path.join(DEPLOY, "npd", "npd-plugin-config.json")
    check_npd_config(gd, os.path.relpath(npd, DEPLOY), npd)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    print(f"check_manifests: {len(docs)} objects, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
