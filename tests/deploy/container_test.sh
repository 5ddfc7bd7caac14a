#!/usr/bin/env bash
# The container image end to end: deploy/container/build.sh builds it from
# BUILD_DIR, it is inspected (one layer, entrypoint, user, labels, exactly
# the binaries' library closure and no NVIDIA driver library, the compressed
# size), then run: the demo check as the image's default user, and the
# exporter as the DaemonSet runs it (uid 0, no capability, read-only root,
# the history on a mounted directory), scraped once. Then removed again.
#
#   tests/deploy/container_test.sh BUILD_DIR
#
# It runs under podman where podman can start a container here, else in a
# chroot of the unpacked image (GD_CONTAINER_RUN=podman or chroot forces one);
# the summary line says which. Root only, as deb_test.sh.
#
# From a release build (GD_RELEASE) the image is made from the release
# tarball (cpack -G TGZ, as scripts/package.sh makes it), and its binaries
# must be the tarball's, byte for byte; the image's size is printed.
set -euo pipefail
build=$(realpath "${1:?usage: container_test.sh BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "container_test: skipped (podman or chroot needs root)"
  exit 0
fi
fail() { echo "container_test: FAIL: $*" >&2; exit 1; }
# The goal of issue 18: under 30 MB compressed, what a node pulls.
max_bytes=${GD_IMAGE_MAX_BYTES:-30000000}
demo=/usr/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json

tmp=$(mktemp -d)
img=localhost/gpudoctor-test:$$
ctr=gpudoctor-test-$$
bg_pid=""
cleanup() {
  if [ -n "$bg_pid" ]; then kill -- "-$bg_pid" 2>/dev/null || kill "$bg_pid" 2>/dev/null || true; fi
  if command -v podman >/dev/null; then
    podman rm -f "$ctr" >/dev/null 2>&1 || true
    podman rmi -f "$img" >/dev/null 2>&1 || true
  fi
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
archive=$tmp/gpudoctor-image.tar
from=()
release_tgz=""
if grep -q '^GD_RELEASE:BOOL=ON' "$build/CMakeCache.txt"; then
  (cd "$build" && cpack -G TGZ) >"$tmp/cpack.log" 2>&1 || fail "cpack -G TGZ: $(tail -20 "$tmp/cpack.log")"
  release_tgz=$build/packages/$(sed -n 's/^set(CPACK_PACKAGE_FILE_NAME "\(.*\)")$/\1/p' "$build/CPackConfig.cmake").tar.gz
  [ -f "$release_tgz" ] || fail "no release tarball $release_tgz"
  from=(--tarball "$release_tgz")
fi
bash "$src/deploy/container/build.sh" --diag no --no-load "${from[@]}" "$build" "$archive"

# --- what is in it -----------------------------------------------------------
mkdir "$tmp/layout"
tar -C "$tmp/layout" -xf "$archive"
python3 - "$tmp/layout" "$version" "$max_bytes" "$(stat -c %s "$archive")" >"$tmp/layers" <<'EOF' \
  || fail "image metadata (above)"
import json, sys
layout, version, max_bytes, archive_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
blob = lambda d: f"{layout}/blobs/{d.replace(':', '/')}"
index = json.load(open(f"{layout}/index.json"))
ok = True
def want(cond, what):
    global ok
    if not cond:
        print(f"container_test: FAIL: {what}", file=sys.stderr)
        ok = False
want(len(index["manifests"]) == 1, f"{len(index['manifests'])} manifests in the archive")
desc = index["manifests"][0]
ref = desc.get("annotations", {}).get("org.opencontainers.image.ref.name")
want(ref == f"localhost/gpudoctor:{version}", f"archive names {ref}, not localhost/gpudoctor:{version}")
manifest = json.load(open(blob(desc["digest"])))
config = json.load(open(blob(manifest["config"]["digest"])))
c = config["config"]
layers = manifest["layers"]
want(len(layers) == 1, f"{len(layers)} layers, not 1")
want(all(l["mediaType"].endswith("tar+gzip") for l in layers), "a layer not gzip-compressed")
want(c.get("Entrypoint") == ["/usr/bin/gpudoctor"], f"entrypoint {c.get('Entrypoint')}")
want(c.get("Cmd") == ["check"], f"cmd {c.get('Cmd')}")
want(c.get("User") == "65532:65532", f"user {c.get('User')!r}, not 65532:65532")
want("9835/tcp" in c.get("ExposedPorts", {}), "port 9835/tcp not exposed")
want(not any(e.startswith("NVIDIA_VISIBLE_DEVICES=") for e in c.get("Env", [])),
     "the image asks for GPUs itself (NVIDIA_VISIBLE_DEVICES)")
labels = c.get("Labels", {})
for k, v in {"org.opencontainers.image.title": "gpudoctor",
             "org.opencontainers.image.version": version,
             "io.gpudoctor.diag": "absent"}.items():
    want(labels.get(k) == v, f"label {k}={labels.get(k)!r}, not {v!r}")
for k in ("org.opencontainers.image.created", "org.opencontainers.image.revision",
          "org.opencontainers.image.description"):
    want(labels.get(k), f"no label {k}")
want(config.get("os") == "linux" and config.get("architecture"), "no os/architecture")
compressed = sum(l["size"] for l in layers) + manifest["config"]["size"]
want(archive_bytes < max_bytes, f"the archive is {archive_bytes} bytes, the goal is under {max_bytes}")
want(compressed < max_bytes, f"{compressed} bytes compressed, the goal is under {max_bytes}")
for l in layers:
    print(blob(l["digest"]))
print(f"container_test: {len(layers)} layer, {compressed} bytes compressed "
      f"({archive_bytes} archive), entrypoint {c['Entrypoint']} {c['Cmd']}, user {c['User']}",
      file=sys.stderr)
sys.exit(0 if ok else 1)
EOF

mkdir "$tmp/rootfs"
while read -r layer; do tar -C "$tmp/rootfs" -xzf "$layer"; done <"$tmp/layers"
r=$tmp/rootfs
for f in usr/bin/gpudoctor usr/bin/gpudoctor-serve usr/bin/sh usr/bin/sleep ".$demo"; do
  [ -e "$r/$f" ] || fail "no /${f#./} in the image"
done
[ ! -e "$r/usr/bin/gpudoctor-diag" ] || fail "gpudoctor-diag in an image built --diag no"
if [ -n "$release_tgz" ]; then
  mkdir "$tmp/tgz"
  tar -C "$tmp/tgz" --strip-components=1 -xzf "$release_tgz"
  for b in gpudoctor gpudoctor-serve; do
    cmp -s "$tmp/tgz/bin/$b" "$r/usr/bin/$b" || fail "/usr/bin/$b in the image is not the release tarball's"
  done
fi
compressed_bytes=$(stat -c %s "$archive")
unpacked_bytes=$(du -sb "$r" | cut -f1)
echo "container_test: image size $compressed_bytes bytes compressed ($(awk -v b="$compressed_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB), $unpacked_bytes unpacked ($(awk -v b="$unpacked_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB)${release_tgz:+, binaries from $(basename "$release_tgz")}"
[ "$(stat -c %u:%a "$r/var/lib/gpudoctor")" = 65532:755 ] || fail "/var/lib/gpudoctor not 65532, 0755"
[ "$(stat -c %a "$r/tmp")" = 1777 ] || fail "/tmp not 1777"
nvidia=$(find "$r" -name 'libcuda.so*' -o -name 'libnvidia-*' | sed "s|^$r||")
[ -z "$nvidia" ] || fail "NVIDIA driver libraries in the image: $nvidia"
# Exactly the closure: the libraries in the image are those the image's
# binaries load (ldd here) and the libraries they dlopen when asked (TLS,
# the journal) with theirs, no more and no fewer, and the libc6 stubs the
# driver's NVML and libcuda need when they are dlopened (build.sh).
# awk reads ldconfig's whole list: one that stopped at the first match would
# leave ldconfig writing into a closed pipe, and its SIGPIPE (exit 141) ends
# this script under pipefail when the list outgrows the pipe's buffer (CI).
optional=$(for lib in libssl.so.3 libsystemd.so.0; do
  ldconfig -p | awk -v n="$lib" '$1 == n && !found {print $NF; found = 1}'
done)
want_libs=$({
  for f in "$r"/usr/bin/*; do [ -L "$f" ] || ldd "$f"; done |
    sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | xargs -n1 basename
  for f in $optional; do basename "$f"; ldd "$f"; done |
    sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p; /^lib/p' | xargs -n1 basename
  printf '%s\n' libdl.so.2 libpthread.so.0 librt.so.1
} | sort -u)
have_libs=$(find "$r/usr/lib" "$r/usr/lib64" -type f -name '*.so*' | xargs -n1 basename | sort -u)
[ "$want_libs" = "$have_libs" ] ||
  fail "the libraries are not the binaries' closure: $(diff <(echo "$want_libs") <(echo "$have_libs") | grep '^[<>]' | tr '\n' ' ')"
grep -q " libc6 " "$r/usr/share/doc/gpudoctor/image-packages.txt" || fail "image-packages.txt names no libc6"
[ -f "$r/usr/share/doc/libc6/copyright" ] || fail "no copyright file of libc6"
# The manifests and docs name the image this build makes.
for f in deploy/kubernetes/daemonset.yaml deploy/kubernetes/nfd-labeller.yaml; do
  images=$(sed -n 's/^ *image: *//p' "$src/$f" | sort -u)
  [ "$images" = "localhost/gpudoctor:$version" ] || fail "$f uses image '$images', not localhost/gpudoctor:$version"
done

# --- running it --------------------------------------------------------------
# podman, if it starts a container here. Some kernels and cgroup layouts
# need runc rather than the default crun (cgroup v1 with a v2 hierarchy
# beside it: "cgroups in hybrid mode not supported"), and the hard limits of
# a sandboxed root may be below podman's defaults, so the limits are lowered.
mode=${GD_CONTAINER_RUN:-}
podman_args=()
limits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
if [ "$mode" != chroot ] && command -v podman >/dev/null; then
  # Under a name of its own: a localhost/gpudoctor already loaded stays.
  skopeo copy --quiet "oci-archive:$archive" "containers-storage:$img" 2>"$tmp/load.log" ||
    fail "loading the archive into podman's storage: $(cat "$tmp/load.log")"
  for rt in "" runc; do
    args=(${rt:+--runtime "$rt"})
    if podman "${args[@]}" run --rm --network none "${limits[@]}" "$img" --version \
      >"$tmp/probe" 2>&1; then
      podman_args=("${args[@]}")
      mode=podman${rt:+ (runtime $rt)}
      break
    fi
  done
  [ -n "$mode" ] || { echo "container_test: podman cannot start a container here ($(tail -1 "$tmp/probe")): chroot"; mode=chroot; }
fi
case "$mode" in
  podman*) ;;
  chroot | "") mode=chroot ;;
  *) fail "GD_CONTAINER_RUN=$mode: podman could not start a container ($(tail -1 "$tmp/probe" 2>/dev/null))" ;;
esac
# chroot: the mounts it needs (/dev, /proc, the history directory) are made in
# a mount namespace of its own, so they go with it; the image's environment.
in_chroot() {
  local user=$1
  shift
  env -i PATH=/usr/bin:/usr/sbin XDG_STATE_HOME=/var/lib HISTORY_DIR="${HISTORY_DIR:-}" \
    unshare --mount --pid --fork --kill-child /bin/sh -c '
      r=$1; user=$2; shift 2
      mount --rbind /dev "$r/dev" && mount -t proc proc "$r/proc" &&
        { [ -z "$HISTORY_DIR" ] || mount --bind "$HISTORY_DIR" "$r/var/lib/gpudoctor"; } &&
        exec chroot --userspec="$user" "$r" "$@"' sh "$r" "$user" "$@"
}
[ "$mode" != chroot ] || mkdir -p "$r/proc" "$r/dev"
# in_image USER ARGS...: the image's entrypoint with ARGS, as USER.
in_image() {
  local user=$1
  shift
  if [ "$mode" = chroot ]; then
    in_chroot "$user" /usr/bin/gpudoctor "$@"
  else
    podman "${podman_args[@]}" run --rm --network none "${limits[@]}" --user "$user" "$img" "$@"
  fi
}

set +e
out=$(in_image 65532:65532 check --from "$demo" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check --from $demo in the image exited $rc, not 2: $out"
grep -q "FAIL" <<<"$out" || fail "the demo report in the image has no FAIL: $out"
grep -q "ulimit" <<<"$out" || fail "the demo report in the image does not name the ulimit: $out"

# The NFD labeller's loop: /bin/sh, sleep and gpudoctor on PATH.
if [ "$mode" = chroot ]; then
  out=$(in_chroot 0:0 /bin/sh -c 'gpudoctor --version && sleep 0 && echo loop-ok' 2>&1) || true
else
  out=$(podman "${podman_args[@]}" run --rm --network none "${limits[@]}" --entrypoint /bin/sh \
    "$img" -c 'gpudoctor --version && sleep 0 && echo loop-ok' 2>&1) || true
fi
grep -q loop-ok <<<"$out" || fail "/bin/sh -c '... sleep ...' (the labeller's loop): $out"

# The exporter as the DaemonSet runs it, on the demo snapshot.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$tmp/history"
serve=(serve --interval 1s --check-interval 2s --history /var/lib/gpudoctor/history.db --from "$demo")
if [ "$mode" = chroot ]; then
  set -m  # a process group of its own, for cleanup's kill
  (HISTORY_DIR=$tmp/history in_chroot 0:0 /usr/bin/gpudoctor "${serve[@]}" \
    --listen "127.0.0.1:$port") >"$tmp/serve.log" 2>&1 &
  bg_pid=$!
  set +m
else
  podman "${podman_args[@]}" run -d --name "$ctr" "${limits[@]}" -p "127.0.0.1:$port:9835" \
    --user 0:0 --cap-drop all --security-opt no-new-privileges --read-only --tmpfs /tmp \
    -v "$tmp/history:/var/lib/gpudoctor" "$img" "${serve[@]}" --listen 0.0.0.0:9835 >/dev/null
fi
# Scraped until the first check is in (a scrape before it has no verdict).
metrics=""
for _ in $(seq 1 100); do
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null) &&
    grep -q '^gpudoctor_verdict' <<<"$metrics" && break
  sleep 0.2
done
if [ "$mode" = chroot ]; then log=$(cat "$tmp/serve.log"); else log=$(podman logs "$ctr" 2>&1); fi
[ -n "$metrics" ] || fail "no /metrics from the exporter in the image: $log"
for series in "gpudoctor_build_info{version=\"$version\"} 1" 'gpudoctor_verdict{severity="fail"} 1' \
  'gpudoctor_finding{id="memory.address-space-limit",severity="fail",'; do
  grep -qF "$series" <<<"$metrics" || fail "/metrics has no $series: $log"
done
[ "$(curl -s "http://127.0.0.1:$port/healthz")" = ok ] || fail "/healthz is not ok: $log"
for _ in $(seq 1 50); do
  [ -s "$tmp/history/history.db" ] && break
  sleep 0.2
done
[ -s "$tmp/history/history.db" ] || fail "no history in the mounted /var/lib/gpudoctor: $log"
echo "container_test: ok ($mode; $(grep -c '^gpudoctor_' <<<"$metrics") gpudoctor_ series scraped)"
