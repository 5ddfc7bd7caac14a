#!/usr/bin/env bash
# The glibc the release binaries are linked against: Debian 11's (glibc
# 2.31), so they run on every system with glibc 2.31 or newer (Debian 11+,
# Ubuntu 20.04+, RHEL 9+; docs/install.md). Only the link uses it: the
# sources compile with the build machine's headers and compiler (gcc 12,
# C++20), and the few symbols of a newer glibc that the static libstdc++
# and libgcc call are supplied by src/util/glibc_floor_symbols.cc.
#
#   bash scripts/sysroot.sh [x86_64|aarch64]    (default: this machine's)
#
# Prints the sysroot's path, build-sysroot/bullseye-<arch>. libc6 and
# libc6-dev come from Debian's registry through apt with a state of its own
# (nothing of the machine's apt changes), which checks them against the
# archive's signed Release file (debian-archive-keyring).
set -euo pipefail
arch=${1:-$(uname -m)}
case $arch in
  x86_64) debarch=amd64 triplet=x86_64-linux-gnu ;;
  aarch64) debarch=arm64 triplet=aarch64-linux-gnu ;;
  *)
    echo "sysroot.sh: unknown architecture '$arch' (x86_64 or aarch64)" >&2
    exit 64
    ;;
esac
cd "$(dirname "$0")/.."
root=$PWD/build-sysroot/bullseye-$arch
if [[ -f $root/.ready ]]; then
  echo "$root"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
touch "$work/status"
chmod -R 755 "$work"  # apt downloads as its own user, _apt
echo "deb http://deb.debian.org/debian bullseye main" >"$work/sources.list"
apt=(apt-get -q -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists="$work/lists" -o Dir::State::status="$work/status"
  -o Dir::Cache="$work/cache" -o APT::Architectures::="$debarch" -o Debug::NoLocking=1)
if ! (cd "$work" && "${apt[@]}" update && "${apt[@]}" download "libc6:$debarch" "libc6-dev:$debarch") \
  >"$work/log" 2>&1; then
  tail -20 "$work/log" >&2
  echo "sysroot.sh: could not fetch Debian 11's glibc for $debarch" >&2
  exit 1
fi
rm -rf "$root"
mkdir -p "$root"
for pkg in libc6 libc6-dev; do
  deb=$(ls "$work/${pkg}_"*"_$debarch.deb")
  dpkg-deb -x "$deb" "$root"
done
# Debian's links are absolute (/lib64/ld-linux-x86-64.so.2 ->
# /lib/x86_64-linux-gnu/ld-2.31.so), and so are the paths in its libc.so
# linker script: ld looks for both inside the sysroot, so the links are made
# relative to it.
find "$root" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
done
[[ -f $root/usr/lib/$triplet/libc.so && -f $root/usr/lib/$triplet/crt1.o ]] || {
  echo "sysroot.sh: $root lacks libc.so or crt1.o for $triplet" >&2
  exit 1
}
touch "$root/.ready"
echo "$root"
