#!/usr/bin/env bash
# The RPM packages of a release build: cpack makes them in BUILD_DIR/packages,
# then each is read back with rpm (its files; its requirements, which must
# be glibc's alone; its architecture), and gpudoctor's is installed into an
# empty tree with rpm --root, run from there on the demo snapshot, and
# erased again, leaving nothing behind.
#
#   tests/packages/rpm_test.sh BUILD_DIR
#
# Needs rpm (Debian's package rpm gives rpm and rpmbuild). A cross build's
# packages (another CPU) are read but not run.
set -euo pipefail
build=$(realpath "${1:?usage: rpm_test.sh BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "rpm_test: FAIL: $*" >&2; exit 1; }
for tool in rpm rpmbuild cpack; do
  command -v "$tool" >/dev/null || fail "needs $tool (Debian: apt-get install rpm)"
done
grep -q '^GD_RELEASE:BOOL=ON' "$build/CMakeCache.txt" || fail "$build is not a release build (GD_RELEASE=ON)"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
arch=$(sed -n 's/^set(CPACK_RPM_PACKAGE_ARCHITECTURE "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
# The glibc floor the packages declare (cmake/packaging.cmake); $GD_GLIBC_FLOOR overrides.
floor=${GD_GLIBC_FLOOR:-$(sed -n 's/^set(CPACK_GD_GLIBC_FLOOR "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")}
[ -n "$arch" ] && [ -n "$floor" ] || fail "no RPM architecture or glibc floor in $build/CPackConfig.cmake"

rm -f "$build"/packages/*.rpm
(cd "$build" && cpack -G RPM) >"$build/cpack-RPM.log" 2>&1 || {
  tail -30 "$build/cpack-RPM.log" >&2
  fail "cpack -G RPM (log: $build/cpack-RPM.log)"
}
gd_rpm=$build/packages/gpudoctor-$version-1.$arch.rpm
lib_rpm=$build/packages/libgpudoctor-$version-1.$arch.rpm
[ -f "$gd_rpm" ] && [ -f "$lib_rpm" ] || fail "no $gd_rpm or $lib_rpm: $(ls "$build/packages")"

# --- what each package holds and needs ------------------------------------------
files=$(rpm -qpl "$gd_rpm")
for want in /usr/bin/gpudoctor /usr/bin/gpudoctor-serve /usr/share/man/man1/gpudoctor.1 \
  /usr/share/man/man1/gpudoctor-check.1 /usr/lib/systemd/system/gpudoctor.service \
  /usr/share/bash-completion/completions/gpudoctor /usr/share/gpudoctor/slurm/gpudoctor-healthcheck.sh \
  /usr/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json; do
  grep -qxF "$want" <<<"$files" || fail "gpudoctor.rpm has no $want"
done
# Directories the distribution owns (filesystem, systemd, bash-completion)
# are not claimed, or installing the package would conflict.
for dir in /usr /usr/bin /usr/lib/systemd/system /usr/share/bash-completion/completions; do
  grep -qxF "$dir" <<<"$files" && fail "gpudoctor.rpm claims the directory $dir"
done
libfiles=$(rpm -qpl "$lib_rpm")
grep -q '/libgpudoctor\.so' <<<"$libfiles" || fail "libgpudoctor.rpm has no libgpudoctor.so: $libfiles"
grep -q '/gpudoctor/gpudoctor\.h$' <<<"$libfiles" || fail "libgpudoctor.rpm has no gpudoctor.h"

# glibc's sonames (x86_64 and aarch64), as rpm's ELF dependency generator
# writes them: libc.so.6(GLIBC_2.17)(64bit), ld-linux-aarch64.so.1()(64bit).
glibc='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)(\((GLIBC_[0-9.]+)?\))?(\(64bit\))?$'
for rpmfile in "$gd_rpm" "$lib_rpm"; do
  name=$(basename "$rpmfile")
  [ "$(rpm -qp --qf '%{ARCH}' "$rpmfile")" = "$arch" ] || fail "$name is not $arch"
  reqs=$(rpm -qpR "$rpmfile")
  # rtld(GNU_HASH): glibc's loader reads .gnu.hash (every glibc since 2.5).
  others=$(grep -Ev "$glibc" <<<"$reqs" | grep -Ev '^rpmlib\(' |
    grep -vxF -e "gpudoctor = $version" -e 'rtld(GNU_HASH)' || true)
  # /bin/sh: rpm's generator reads the interpreter of shipped scripts (the
  # Slurm scripts are #!/bin/sh) and a scriptlet's; allowed only where the
  # package has one or the other.
  if grep -qx /bin/sh <<<"$others"; then
    if [ -n "$(rpm -qp --scripts "$rpmfile")" ] ||
      grep -q '^/usr/share/gpudoctor/slurm/.*\.sh$' <<<"$(rpm -qpl "$rpmfile")"; then
      others=$(grep -vx /bin/sh <<<"$others" || true)
    fi
  fi
  [ -z "$others" ] || fail "$name requires more than glibc: $(tr '\n' ' ' <<<"$others")"
  grep -q '^libc\.so\.6' <<<"$reqs" || fail "$name does not require libc.so.6 (no ELF dependencies read?): $reqs"
  top=$(grep -o 'GLIBC_[0-9.]*' <<<"$reqs" | sed 's/GLIBC_//' | sort -uV | tail -1)
  [ "$(printf '%s\n%s\n' "$top" "$floor" | sort -V | tail -1)" = "$floor" ] ||
    fail "$name requires GLIBC_$top, above the floor $floor the packages declare"
  echo "rpm_test: $name: $(wc -l <<<"$reqs") requirements, glibc only (highest GLIBC_$top, floor $floor)"
done
grep -qxF "gpudoctor = $version" <<<"$(rpm -qpR "$lib_rpm")" || fail "libgpudoctor.rpm does not require gpudoctor = $version"

# Another architecture's binaries run under qemu-user where it is here
# (aarch64: qemu-aarch64-static, with the cross compiler's glibc).
host_arch=$(uname -m)
run=() other_arch=()
if [ "$arch" != "$host_arch" ]; then
  other_arch=(--ignorearch)
  if [ "$arch" = aarch64 ] && command -v qemu-aarch64-static >/dev/null && [ -d /usr/aarch64-linux-gnu ]; then
    run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
  else
    echo "rpm_test: ok (read only: $arch packages on a $host_arch machine)"
    exit 0
  fi
fi

# --- installed and run -------------------------------------------------------
# An empty tree with an rpm database of its own, where rpm-based systems
# keep it (Debian's rpm defaults to ~/.rpmdb). --nodeps: that database lists
# no glibc (the tree has none; the installed binaries run with this
# machine's). Debian's rpm warns on stderr that it is not Debian's package
# manager: kept in a log, shown on failure.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir "$root"
rpm_in() { rpm --root "$root" --dbpath /var/lib/rpm "$@" 2>>"$tmp/rpm.log"; }
rpm_in --initdb || fail "rpm --initdb: $(cat "$tmp/rpm.log")"
rpm_in --nodeps "${other_arch[@]}" -i "$gd_rpm" "$lib_rpm" || fail "rpm -i: $(cat "$tmp/rpm.log")"
[ "$(rpm_in -q gpudoctor)" = "gpudoctor-$version-1.$arch" ] || fail "rpm -q gpudoctor after install"
gd=$root/usr/bin/gpudoctor
for bin in "$gd" "$root/usr/bin/gpudoctor-serve" "$(ls "$root"/usr/lib/libgpudoctor.so* | head -1)"; do
  sections=$(readelf -S -W "$bin")
  grep -qE '\.symtab|\.debug_info' <<<"$sections" && fail "$bin is not stripped"
done
grep -q "^gpudoctor $version" <<<"$("${run[@]}" "$gd" --version)" || fail "$gd --version: $("${run[@]}" "$gd" --version 2>&1)"
set +e
out=$("${run[@]}" "$gd" check --from "$src/tests/snapshots/ws-4x4090-ulimit.json" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check --from the demo snapshot exited $rc, not 2: $out"
grep -q "memory.address-space-limit" <<<"$out" || fail "the demo report does not name memory.address-space-limit: $out"
unit=$root/usr/lib/systemd/system/gpudoctor.service
grep -q '^ExecStart=/usr/bin/gpudoctor serve ' "$unit" || fail "the unit's ExecStart is not /usr/bin/gpudoctor: $(grep ExecStart= "$unit")"
grep -q "^prefix=/usr$" "$root/usr/lib/pkgconfig/gpudoctor.pc" || fail "gpudoctor.pc's prefix is not /usr"
rpm_in --nodeps -e libgpudoctor gpudoctor || fail "rpm -e: $(cat "$tmp/rpm.log")"
left=$(cd "$root" && find . -path ./var/lib/rpm -prune -o ! -type d -print)
[ -z "$left" ] || fail "rpm -e left files behind: $left"
echo "rpm_test: ok ($(basename "$gd_rpm") $(stat -c %s "$gd_rpm") bytes, $(basename "$lib_rpm") $(stat -c %s "$lib_rpm") bytes: installed with rpm --root, run, erased)"
