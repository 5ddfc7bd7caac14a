#!/usr/bin/env bash
# The release .deb on a plain Debian system: a copy of the debootstrap
# chroot made by tests/packages/chroot.sh (which has none of gpudoctor's
# build dependencies), where dpkg installs the gpudoctor and libgpudoctor
# packages, a normal user runs them (the version, the demo report from the
# installed example, the C library through the Python module), and
# `dpkg --purge` removes them again, leaving no file of theirs. The cached
# chroot itself is never changed: the test works on a copy.
#
#   tests/packages/deb_chroot_test.sh BUILD_DIR [SUITE]     (SUITE: bookworm, the default; bullseye; trixie)
#
# Root only (debootstrap, chroot), as deb_test.sh.
set -euo pipefail
build=$(realpath "${1:?usage: deb_chroot_test.sh BUILD_DIR [SUITE]}")
suite=${2:-bookworm}
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "deb_chroot_test: skipped (chroot needs root)"
  exit 0
fi
fail() { echo "deb_chroot_test: FAIL ($suite): $*" >&2; exit 1; }
grep -q '^GD_RELEASE:BOOL=ON' "$build/CMakeCache.txt" || fail "$build is not a release build (GD_RELEASE=ON)"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
arch=$(sed -n 's/^set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")

rm -f "$build"/packages/*.deb
(cd "$build" && cpack -G DEB) >"$build/cpack-DEB.log" 2>&1 || {
  tail -30 "$build/cpack-DEB.log" >&2
  fail "cpack -G DEB (log: $build/cpack-DEB.log)"
}
debs=("$build/packages/gpudoctor_${version}_$arch.deb" "$build/packages/libgpudoctor_${version}_$arch.deb")
for deb in "${debs[@]}"; do [ -f "$deb" ] || fail "no $deb: $(ls "$build/packages")"; done
depends=$(dpkg-deb -f "${debs[0]}" Depends)
grep -qE '^libc6 \(>= [0-9.]+\)$' <<<"$depends" || fail "gpudoctor depends on '$depends', not libc6 alone"
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
  echo "deb_chroot_test: $arch packages depend on '$depends' alone; not installed ($arch packages do not run on $(dpkg --print-architecture))"
  exit 0
fi

cached=$(bash "$src/tests/packages/chroot.sh" "$suite" | tail -1)
[ -f "$cached/.ready" ] || fail "no chroot at '$cached' (tests/packages/chroot.sh $suite)"
tmp=$(mktemp -d)
trap 'rm -rf --one-file-system "$tmp"' EXIT
root=$tmp/root
# -x: a file system mounted in the cached chroot (its /proc, by another
# test) is not copied.
cp -ax "$cached" "$root"
# The tree as found, less what dpkg itself writes (its database and logs),
# to compare with what the purge leaves.
tree() { (cd "$root" && find . -xdev \( -path ./var/lib/dpkg -o -path ./var/log -o -path ./tmp \
  -o -path ./var/cache/debconf \) -prune -o -print | sort); }
tree >"$tmp/before"

mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
# The chroot's own environment, not this machine's (PATH, LD_LIBRARY_PATH).
chroot=$(command -v chroot)
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$chroot" "$root" "$@"; }
as_user() { env -i PATH=/usr/bin:/bin HOME=/home/researcher LANG=C.UTF-8 "$chroot" --userspec=1000:1000 "$root" "$@"; }
in_root dpkg -i /tmp/debs/"$(basename "${debs[0]}")" /tmp/debs/"$(basename "${debs[1]}")" >"$tmp/dpkg.log" 2>&1 ||
  fail "dpkg -i: $(cat "$tmp/dpkg.log")"
[ "$(in_root dpkg-query -W -f='${Status}' gpudoctor)" = "install ok installed" ] || fail "gpudoctor is not installed"
# What dpkg put there: compared after the purge.
in_root dpkg -L gpudoctor libgpudoctor >"$tmp/listed"

out=$(as_user /usr/bin/gpudoctor --version 2>&1) || fail "gpudoctor --version: $out"
grep -q "^gpudoctor $version" <<<"$out" || fail "gpudoctor --version: $out"
demo=/usr/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json
set +e
out=$(as_user /usr/bin/gpudoctor check --from "$demo" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check --from $demo exited $rc, not 2: $out"
grep -q "memory.address-space-limit" <<<"$out" || fail "the demo report does not name memory.address-space-limit: $out"
out=$(as_user /usr/bin/gpudoctor serve --help 2>&1) || fail "gpudoctor serve --help (gpudoctor-serve): $out"
grep -q -- "--listen" <<<"$out" || fail "gpudoctor serve --help: $out"
# The C library, loaded by the Python module with the system's python3.
out=$(as_user python3 -c 'import gpudoctor; print(gpudoctor.version())' 2>&1) ||
  fail "python3 -c 'import gpudoctor; gpudoctor.version()': $out"
grep -q "$version" <<<"$out" || fail "gpudoctor.version() from the library: $out"
unit=$root/usr/lib/systemd/system/gpudoctor.service
[ -f "$unit" ] || fail "no /usr/lib/systemd/system/gpudoctor.service"
grep -q '^ExecStart=/usr/bin/gpudoctor serve ' "$unit" || fail "the unit's ExecStart: $(grep ExecStart= "$unit")"
[ -x "$root/usr/share/gpudoctor/slurm/gpudoctor-healthcheck.sh" ] || fail "no Slurm health check script"

in_root dpkg --purge gpudoctor libgpudoctor >"$tmp/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$tmp/purge.log")"
left=""
while read -r f; do
  [ -d "$root$f" ] && continue # a directory others share (/usr/bin) stays
  if [ -e "$root$f" ] || [ -L "$root$f" ]; then left+="$f "; fi
done <"$tmp/listed"
[ -z "$left" ] || fail "dpkg --purge left files of the packages: $left"
rm -rf "$root/tmp/debs"
changed=$(diff "$tmp/before" <(tree) || true)
[ -z "$changed" ] || fail "the system differs after install and purge: $changed"
echo "deb_chroot_test: ok (Debian $suite: dpkg -i, run as uid 1000, dpkg --purge leaving the system as it was)"
