#!/usr/bin/env bash
# The release packages from a finished build (cmake/packaging.cmake): one
# .deb and one .rpm per component and the tarball
# gpudoctor-VERSION-linux-ARCH.tar.gz, all in BUILD_DIR/packages/, each
# printed with its size. Nothing is built here: build the tree first (the
# "release" preset, or a cross build given GD_HOST_CLI_DOCS).
#
#   scripts/package.sh BUILD_DIR
#
# Needs dpkg-deb (dpkg) and rpmbuild (Debian: apt-get install rpm).
set -euo pipefail
build=$(realpath "${1:?usage: package.sh BUILD_DIR}")
die() { echo "package.sh: $*" >&2; exit 1; }
[ -f "$build/CPackConfig.cmake" ] || die "$build is not a configured cmake build (no CPackConfig.cmake)"
for tool in cpack dpkg-deb rpmbuild; do
  command -v "$tool" >/dev/null || die "needs $tool (Debian: apt-get install cmake dpkg rpm)"
done
grep -q '^GD_RELEASE:BOOL=ON' "$build/CMakeCache.txt" ||
  echo "package.sh: note: $build is not a release build (GD_RELEASE): its packages depend on this machine's libraries" >&2

rm -rf "$build/packages"
for gen in DEB RPM TGZ; do
  log=$build/cpack-$gen.log
  (cd "$build" && cpack -G "$gen") >"$log" 2>&1 || {
    tail -30 "$log" >&2
    die "cpack -G $gen failed (log: $log)"
  }
done
shopt -s nullglob
artifacts=("$build"/packages/*.deb "$build"/packages/*.rpm "$build"/packages/*.tar.gz)
[ ${#artifacts[@]} -gt 0 ] || die "cpack wrote nothing into $build/packages"
for f in "${artifacts[@]}"; do
  bytes=$(stat -c %s "$f")
  printf 'package.sh: %s %d bytes (%s MB)\n' "${f#"$PWD"/}" "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')"
done
