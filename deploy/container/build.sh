#!/usr/bin/env bash
# The container image (deploy/container/README.md): FROM scratch, one layer
# holding gpudoctor, gpudoctor-serve, optionally gpudoctor-diag, exactly the
# shared libraries they load (ldd, at build time), dash and sleep for the NFD
# labeller's loop, and the demo snapshot. Built with umoci and skopeo from
# Debian; nothing is pulled from a registry.
#
#   deploy/container/build.sh [--diag auto|yes|no] [--name NAME] [--no-load] [--tarball FILE] BUILD_DIR [OUT.tar]
#
# BUILD_DIR is a finished cmake build (installed from with `cmake --install
# --strip`, nothing is built). OUT is an OCI archive (default
# BUILD_DIR/gpudoctor-image.tar) tagged NAME:VERSION, NAME defaulting to
# localhost/gpudoctor and VERSION being the project's; where podman is
# installed it is also loaded into podman's storage (--no-load: not).
# --diag: the CUDA helper, from `cmake --install --component diag`; auto
# takes it when the build has one (only builds with nvcc do), yes requires it.
# --tarball: the binaries and the demo snapshot from the release tarball
# (scripts/package.sh, gpudoctor-VERSION-linux-ARCH.tar.gz) instead of
# `cmake --install`, so the image holds the very files released; the CUDA
# helper is not in it (--diag no).
# It brings cuBLAS and NCCL, so the image is then far larger (README.md).
set -euo pipefail
usage() {
  echo "usage: build.sh [--diag auto|yes|no] [--name NAME] [--no-load] [--tarball FILE] BUILD_DIR [OUT.tar]" >&2
  exit 64
}
diag=no
name=localhost/gpudoctor
load=1
tarball=""
while [ $# -gt 0 ]; do
  case "$1" in
    --diag) diag=${2:-}; shift 2 || usage ;;
    --diag=*) diag=${1#--diag=}; shift ;;
    --name) name=${2:-}; shift 2 || usage ;;
    --name=*) name=${1#--name=}; shift ;;
    --no-load) load=0; shift ;;
    --tarball) tarball=${2:-}; shift 2 || usage ;;
    --tarball=*) tarball=${1#--tarball=}; shift ;;
    -*) usage ;;
    *) break ;;
  esac
done
case "$diag" in auto | yes | no) ;; *) usage ;; esac
[ $# -ge 1 ] && [ $# -le 2 ] && [ -n "$name" ] || usage
build=$(realpath "$1")
out=$(realpath -m "${2:-$build/gpudoctor-image.tar}")
src=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "build.sh: $*" >&2; exit 1; }

for tool in cmake umoci skopeo tar ldd dpkg-query; do
  command -v "$tool" >/dev/null || die "needs $tool (Debian: apt-get install cmake umoci skopeo)"
done
[ -f "$build/CMakeCache.txt" ] || die "$build is not a cmake build directory"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || die "no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt"
ref="$name:$version"
# The image's times: the source's last commit, so a rebuild of the same
# commit gives the same image (SOURCE_DATE_EPOCH overrides).
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || echo 0)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
arch=$(dpkg --print-architecture)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/install
root=$tmp/rootfs

if [ -n "$tarball" ]; then
  [ -f "$tarball" ] || die "no tarball $tarball"
  [ "$diag" != yes ] || die "--diag yes: the release tarball has no gpudoctor-diag"
  diag=no
  mkdir -p "$stage"
  tar -C "$stage" --strip-components=1 -xzf "$tarball"
else
  cmake --install "$build" --prefix "$stage" --component gpudoctor --strip >/dev/null
fi
have_diag=0
case "$diag" in
  auto) [ -x "$build/gpudoctor-diag" ] && have_diag=1 ;;
  yes) [ -x "$build/gpudoctor-diag" ] || die "--diag yes: $build has no gpudoctor-diag (built only with nvcc)"
       have_diag=1 ;;
esac
[ "$have_diag" -eq 0 ] || cmake --install "$build" --prefix "$stage" --component diag --strip >/dev/null

# Merged /usr, as Debian 12: /bin, /lib and /lib64 are links into /usr.
mkdir -p "$root"/usr/bin "$root"/usr/lib "$root"/usr/lib64 "$root"/etc "$root"/tmp \
  "$root"/var/lib/gpudoctor "$root"/usr/share/doc/gpudoctor/examples
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
chmod 1777 "$root/tmp"
bins=(gpudoctor gpudoctor-serve)
[ "$have_diag" -eq 0 ] || bins+=(gpudoctor-diag)
for b in "${bins[@]}"; do
  install -m 0755 "$stage/bin/$b" "$root/usr/bin/$b"
done
install -m 0644 "$stage/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json" \
  "$root/usr/share/doc/gpudoctor/examples/"
# The NFD labeller's container runs `/bin/sh -c 'while ...; sleep 60; done'`
# (deploy/kubernetes/nfd-labeller.yaml): dash and coreutils' sleep, no more.
install -m 0755 "$(realpath /bin/dash)" "$root/usr/bin/dash"
ln -s dash "$root/usr/bin/sh"
install -m 0755 "$(realpath /bin/sleep)" "$root/usr/bin/sleep"

# The shared-library closure, from what the binaries load here and now (ldd
# follows the whole tree), so a library added or dropped by the build is
# followed without a list to keep. The NVIDIA driver's libraries are not
# linked (gpudoctor dlopens them) and must never be copied: the NVIDIA
# container toolkit mounts the node's own at run time.
declare -A libs=()
add_closure() {  # FILE: the libraries it loads, as ldd sees them
  local f=$1 line path
  while read -r line; do
    case "$line" in
      *"not found"*) die "$(basename "$f"): a library is not found: $line" ;;
      *"=> /"*) path=${line#*=> }; path=${path%% (*} ;;
      /*) path=${line%% (*} ;;  # the dynamic loader
      *) continue ;;            # linux-vdso.so.1
    esac
    case "$(basename "$path")" in
      libcuda.so* | libnvidia-*) die "$(basename "$f") links $path: the driver's libraries come from the node" ;;
    esac
    libs[$path]=1
  done < <(ldd "$f")
}
for f in "$root"/usr/bin/*; do
  [ -L "$f" ] && continue
  add_closure "$f"
done
# Libraries gpudoctor loads with dlopen only when asked, out of ldd's sight:
# OpenSSL for the exporter's TLS (src/serve/tls.cc), libsystemd for the
# journal (src/probe/kernel_log_journal.cc). Each comes with its closure.
for lib in libssl.so.3 libsystemd.so.0; do
  path=$(ldconfig -p | awk -v n="$lib" '$1 == n && /x86-64|x86_64|AArch64|aarch64/ {print $NF; exit}')
  [ -n "$path" ] || die "$lib is not installed (Debian: libssl3, libsystemd0)"
  libs[$path]=1
  add_closure "$path"
done

# The loader's own directory, where it looks without an ld.so.cache (the
# image has none).
multiarch=$(realpath "$(dirname "$(printf '%s\n' "${!libs[@]}" | grep -m1 '/libc\.so\.6$')")")
# The driver's NVML and libcuda, dlopened from the node's driver, are out of
# ldd's sight, and their own NEEDED entries name libdl.so.2, libpthread.so.0
# and librt.so.1: libc6's stubs since glibc 2.34, which no binary here links,
# so without them in the image the dlopen fails. The NVIDIA container
# toolkit brings the driver's libraries, not libc's.
for stub in libdl.so.2 libpthread.so.0 librt.so.1; do
  if [ -e "$multiarch/$stub" ]; then libs[$multiarch/$stub]=1; fi
done

# Each file's Debian package, for the image's package list and the
# packages' copyright files (dpkg knows a file by the path its package
# ships, before or after /usr merging).
package_of() {
  local p=$1 q
  for q in "$p" "$(realpath "$p")" "${p#/usr}" "/usr$p"; do
    dpkg-query -S "$q" 2>/dev/null | sed -n '1s/:.*//p' | grep . && return 0
  done
  return 1
}
declare -A pkgs=()
list=$root/usr/share/doc/gpudoctor/image-packages.txt
{
  echo "# gpudoctor $version container image ($created, $revision): each file that came"
  echo "# from a Debian package, with that package and its version (deploy/container/build.sh)."
  for path in $(printf '%s\n' "${!libs[@]}" /bin/dash /bin/sleep | sort); do
    if pkg=$(package_of "$path"); then
      pkgs[${pkg%%:*}]=1
      echo "$path $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
    else
      echo "$path (no Debian package)"
    fi
  done
} >"$list"
for path in "${!libs[@]}"; do
  # The file itself under the name the loader asks for, in the directory it
  # resolves to (/lib64/ld-linux-x86-64.so.2 -> /usr/lib64/...); one from
  # elsewhere (the CUDA toolkit's cuBLAS and NCCL, found here through the
  # build's RUNPATH or ld.so.conf) goes where the loader looks.
  dir=$(realpath "$(dirname "$path")")
  case "$dir" in /usr/lib | /usr/lib64 | "$multiarch") ;; *) dir=$multiarch ;; esac
  mkdir -p "$root$dir"
  cp -L "$path" "$root$dir/$(basename "$path")"
done
for pkg in "${!pkgs[@]}"; do
  if [ -f "/usr/share/doc/$pkg/copyright" ]; then
    mkdir -p "$root/usr/share/doc/$pkg"
    cp -L "/usr/share/doc/$pkg/copyright" "$root/usr/share/doc/$pkg/copyright"
  fi
done

# uid 65532 by default; the DaemonSet runs uid 0 with every capability
# dropped instead (README.md says why). Its home is the history directory.
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
gpudoctor:x:65532:65532:gpudoctor:/var/lib/gpudoctor:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
gpudoctor:x:65532:
EOF
chmod 0644 "$root/etc/passwd" "$root/etc/group"

# One layer, every entry owned by root except the history directory, with
# the commit's time: the same commit gives the same bytes.
layer=$tmp/layer.tar
tarflags=(--sort=name --mtime="@$epoch" --numeric-owner --format=posix
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
tar -C "$root" -cf "$layer" "${tarflags[@]}" --owner=0 --group=0 \
  --exclude=./var/lib/gpudoctor .
tar -C "$root" -rf "$layer" "${tarflags[@]}" --owner=65532 --group=65532 ./var/lib/gpudoctor

lay=$tmp/oci
umoci init --layout "$lay"
umoci new --image "$lay:img"
umoci raw add-layer --image "$lay:img" --history.created "$created" \
  --history.created_by "deploy/container/build.sh (gpudoctor ${version}, ${bins[*]})" "$layer"
labels=(
  org.opencontainers.image.title=gpudoctor
  "org.opencontainers.image.description=gpudoctor: why CUDA will not start on this machine, and the fix; gpudoctor serve exports GPU health to Prometheus"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.revision=$revision"
  "io.gpudoctor.diag=$([ "$have_diag" -eq 1 ] && echo included || echo absent)"
)
label_args=()
for l in "${labels[@]}"; do label_args+=(--config.label "$l"); done
# XDG_STATE_HOME=/var/lib: a non-root `serve` keeps its history where root's
# goes, /var/lib/gpudoctor/history.db (docs/serve.md's default for root).
# NVIDIA_DRIVER_CAPABILITIES: with GPUs requested, the toolkit mounts libcuda
# as well as NVML, for the check's CUDA probe; no GPU is requested by the
# image itself (no NVIDIA_VISIBLE_DEVICES).
umoci config --image "$lay:img" --no-history --created "$created" --author "gpudoctor" \
  --os linux --architecture "$arch" \
  --config.entrypoint /usr/bin/gpudoctor --config.cmd check \
  --config.user 65532:65532 --config.workingdir / \
  --config.env PATH=/usr/bin --config.env XDG_STATE_HOME=/var/lib \
  --config.env NVIDIA_DRIVER_CAPABILITIES=utility,compute \
  --config.exposedports 9835/tcp "${label_args[@]}"
umoci gc --layout "$lay"

mkdir -p "$(dirname "$out")"
rm -f "$out"
skopeo copy --quiet "oci:$lay:img" "oci-archive:$out:$ref"
size=$(stat -c %s "$out")
echo "build.sh: $out: $ref, 1 layer, $((size / 1024)) KiB, ${bins[*]}, ${#libs[@]} libraries from ${#pkgs[@]} Debian packages"
if [ "$load" -eq 1 ] && command -v podman >/dev/null; then
  podman load --quiet --input "$out" >/dev/null
  echo "build.sh: loaded into podman as $ref"
fi
