#!/usr/bin/env bash
# The release tarball gpudoctor-VERSION-linux-ARCH.tar.gz (cmake/packaging.cmake):
# cpack makes it in BUILD_DIR/packages, its listing must hold the binaries,
# the library, the man pages, the completions, the systemd unit, the Slurm
# scripts and the docs under one top directory; unpacked, its binaries are
# stripped and (on their own CPU) run, and its pkg-config file finds the
# library wherever the tree lies.
#
#   tests/packages/tarball_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: tarball_test.sh BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "tarball_test: FAIL: $*" >&2; exit 1; }
grep -q '^GD_RELEASE:BOOL=ON' "$build/CMakeCache.txt" || fail "$build is not a release build (GD_RELEASE=ON)"
name=$(sed -n 's/^set(CPACK_PACKAGE_FILE_NAME "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[[ $name =~ ^gpudoctor-$version-linux-(x86_64|aarch64)$ ]] || fail "the tarball is named '$name'"
arch=${BASH_REMATCH[1]}

rm -f "$build"/packages/*.tar.gz
(cd "$build" && cpack -G TGZ) >"$build/cpack-TGZ.log" 2>&1 || {
  tail -30 "$build/cpack-TGZ.log" >&2
  fail "cpack -G TGZ (log: $build/cpack-TGZ.log)"
}
tarball=$build/packages/$name.tar.gz
[ -f "$tarball" ] || fail "no $tarball: $(ls "$build/packages")"
listing=$(tar -tzf "$tarball")
outside=$(grep -v "^$name/" <<<"$listing" || true)
[ -z "$outside" ] || fail "files outside the top directory $name/: $outside"
for want in bin/gpudoctor bin/gpudoctor-serve lib/libgpudoctor.so.0 include/gpudoctor/gpudoctor.h \
  lib/pkgconfig/gpudoctor.pc share/man/man1/gpudoctor.1 share/man/man1/gpudoctor-check.1 \
  share/bash-completion/completions/gpudoctor share/zsh/vendor-completions/_gpudoctor \
  share/fish/vendor_completions.d/gpudoctor.fish lib/systemd/system/gpudoctor.service \
  share/gpudoctor/slurm/gpudoctor-healthcheck.sh share/gpudoctor/slurm/gpudoctor-epilog.sh \
  share/gpudoctor/slurm/slurm.conf.example share/doc/gpudoctor/README.md share/doc/gpudoctor/install.md \
  share/doc/gpudoctor/examples/ws-4x4090-ulimit.json; do
  grep -qxF "$name/$want" <<<"$listing" || fail "the tarball has no $want"
done
# The CUDA helper needs the CUDA toolkit beside it: its own package only.
grep -q "/bin/gpudoctor-diag$" <<<"$listing" && fail "the tarball holds gpudoctor-diag"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$tarball"
tree=$tmp/$name
for f in bin/gpudoctor bin/gpudoctor-serve lib/libgpudoctor.so.0; do
  grep -qE '\.symtab|\.debug_info' <<<"$(readelf -S -W "$tree/$f")" && fail "$f is not stripped"
done
[ -x "$tree/share/gpudoctor/slurm/gpudoctor-healthcheck.sh" ] || fail "the Slurm health check is not executable"
# Unpacked into /usr/local (docs/install.md), the unit starts the binary there.
grep -q '^ExecStart=/usr/local/bin/gpudoctor serve ' "$tree/lib/systemd/system/gpudoctor.service" ||
  fail "the unit's ExecStart: $(grep ExecStart= "$tree/lib/systemd/system/gpudoctor.service")"
# pkg-config finds the library where the tree was unpacked, not where cpack staged it.
if command -v pkg-config >/dev/null; then
  libs=$(PKG_CONFIG_PATH=$tree/lib/pkgconfig pkg-config --libs gpudoctor)
  [ -f "$(sed 's/^-L\([^ ]*\) .*/\1/' <<<"$libs")/libgpudoctor.so" ] || fail "pkg-config --libs gpudoctor gives '$libs'"
fi
# Another architecture's binaries run under qemu-user where it is here.
run=()
[ "$arch" = aarch64 ] && [ "$(uname -m)" != aarch64 ] && run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
if [ "$arch" = "$(uname -m)" ] || command -v "${run[0]:-true}" >/dev/null; then
  grep -q "^gpudoctor $version" <<<"$("${run[@]}" "$tree/bin/gpudoctor" --version)" || fail "gpudoctor --version"
  set +e
  out=$("${run[@]}" "$tree/bin/gpudoctor" check --from "$tree/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json" 2>&1)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] && grep -q "memory.address-space-limit" <<<"$out" || fail "check --from the demo exited $rc: $out"
fi
echo "tarball_test: ok ($name.tar.gz, $(stat -c %s "$tarball") bytes, $(wc -l <<<"$listing") entries)"
