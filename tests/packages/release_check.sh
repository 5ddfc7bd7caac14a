#!/usr/bin/env bash
# Checks release binaries (scripts/release.sh) for what the release promises
# (docs/install.md): they are built for the architecture asked, load nothing
# but glibc's own libraries, their highest GLIBC_ symbol version is at most
# the floor, and they run: the version, --help and a bad option (C++
# exceptions, through the unwinder's stand-in for _dl_find_object,
# src/util/glibc_floor_symbols.cc), a check of the bundled demo snapshot and
# of a GB200 compute tray's, an explain, a kernel log decoded.
#
#   tests/packages/release_check.sh DIR      (DIR: gpudoctor, gpudoctor-serve, libgpudoctor.so.0)
#
# $GD_GLIBC_FLOOR: the floor (default 2.31, Debian 11's glibc, which the
# release build links against: scripts/sysroot.sh). $GD_ARCH: x86_64 (the
# default) or aarch64; $GD_RUN: what runs a binary of that architecture
# here (for aarch64 "qemu-aarch64-static -L /usr/aarch64-linux-gnu").
set -euo pipefail
dir=$(realpath "${1:?usage: release_check.sh DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
floor=${GD_GLIBC_FLOOR:-2.31}
arch=${GD_ARCH:-x86_64}
read -r -a run <<<"${GD_RUN:-}"
fail() { echo "release_check: FAIL: $*" >&2; exit 1; }
case $arch in
  x86_64) machine="Advanced Micro Devices X86-64" ;;
  aarch64) machine="AArch64" ;;
  *) fail "unknown GD_ARCH '$arch'" ;;
esac
# glibc's own sonames, x86_64 and aarch64, and the kernel's vDSO.
glibc='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
for bin in gpudoctor gpudoctor-serve libgpudoctor.so.0; do
  f=$dir/$bin
  [ -f "$f" ] || fail "no $f"
  header=$(readelf -h "$f")
  grep -q "Machine: *$machine" <<<"$header" || fail "$bin is not built for $arch"
  # NEEDED entries, not ldd: they are what the binary asks for, on any host.
  needed=$(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}')
  others=$(grep -Ev "$glibc" <<<"$needed" || true)
  [ -z "$others" ] || fail "$bin needs more than glibc: $(tr '\n' ' ' <<<"$others")"
  top=$(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  [ "$(printf '%s\n%s\n' "$top" "$floor" | sort -V | tail -1)" = "$floor" ] ||
    fail "$bin needs GLIBC_$top, above the floor $floor"
  # And what the loader maps for it here, dependencies of dependencies too.
  if [ "$arch" = "$(uname -m)" ]; then
    loaded=$(ldd "$f" | awk '{print $1}' | sed 's|.*/||')
    others=$(grep -Ev "$glibc" <<<"$loaded" || true)
    [ -z "$others" ] || fail "ldd $bin lists more than glibc: $(tr '\n' ' ' <<<"$others")"
  fi
  echo "release_check: $arch $bin needs $(tr '\n' ' ' <<<"$needed")(highest GLIBC_$top, floor $floor)"
done
gd() { "${run[@]}" "$dir/gpudoctor" "$@"; }
# Runs gpudoctor with $1 as its stdin text; sets $out and $rc.
gd_rc() {
  local input=$1
  shift
  set +e
  out=$(gd "$@" 2>&1 <<<"$input")
  rc=$?
  set -e
}
gd_rc "" --version
[ "$rc" -eq 0 ] && grep -q '^gpudoctor ' <<<"$out" || fail "--version exited $rc: $out"
gd_rc "" check --help
[ "$rc" -eq 0 ] && grep -q 'Usage: gpudoctor check' <<<"$out" || fail "check --help exited $rc: $out"
gd_rc "" --no-such-option
[ "$rc" -eq 64 ] || fail "a bad option exited $rc, not 64: $out"
gd_rc "" check --from "$src/tests/snapshots/ws-4x4090-ulimit.json"
[ "$rc" -eq 2 ] && grep -q "memory.address-space-limit" <<<"$out" ||
  fail "check --from the demo snapshot exited $rc: $out"
gd_rc "" check --from "$src/tests/snapshots/gb200-no-imex-channel.json"
[ "$rc" -eq 2 ] && grep -q "fabric.imex-channels-missing" <<<"$out" ||
  fail "check --from the GB200 tray snapshot exited $rc: $out"
gd_rc "RuntimeError: CUDA error: out of memory" explain
grep -q "out of memory" <<<"$out" || fail "explain exited $rc: $out"
gd_rc "" logs --from "$src/tests/logs/dmesg-xid79.txt"
grep -q "Xid 79" <<<"$out" || fail "logs --from a kernel log with Xid 79 exited $rc: $out"
echo "release_check: $arch ok"
