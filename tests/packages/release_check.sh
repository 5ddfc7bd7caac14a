#!/usr/bin/env bash
# Checks release binaries (scripts/release.sh) for what the release promises
# (docs/install.md): they load nothing but glibc's own libraries, their
# highest GLIBC_ symbol version is at most the floor, and they run: the
# version, a check of the bundled demo snapshot, an explain.
#
#   tests/packages/release_check.sh DIR      (DIR holds gpudoctor, gpudoctor-serve)
#
# $GD_GLIBC_FLOOR: the floor to hold them to. The default, 2.36, is what
# Debian 12's toolchain gives (glibc 2.36, gcc 12): its static libstdc++
# calls arc4random (GLIBC_2.36) in std::random_device and its static libgcc
# unwinder _dl_find_object (GLIBC_2.35), because both were built where those
# exist. A lower floor needs a build against an older glibc (issue 35).
set -euo pipefail
dir=$(realpath "${1:?usage: release_check.sh DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
floor=${GD_GLIBC_FLOOR:-2.36}
fail() { echo "release_check: FAIL: $*" >&2; exit 1; }
# glibc's own sonames, x86_64 and aarch64, and the kernel's vDSO.
glibc='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
for bin in gpudoctor gpudoctor-serve; do
  f=$dir/$bin
  [ -x "$f" ] || fail "no $f"
  # NEEDED entries, not ldd: they are what the binary asks for, on any host.
  needed=$(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}')
  others=$(grep -Ev "$glibc" <<<"$needed" || true)
  [ -z "$others" ] || fail "$bin needs more than glibc: $(tr '\n' ' ' <<<"$others")"
  top=$(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  [ "$(printf '%s\n%s\n' "$top" "$floor" | sort -V | tail -1)" = "$floor" ] ||
    fail "$bin needs GLIBC_$top, above the floor $floor"
  echo "release_check: $bin needs $(tr '\n' ' ' <<<"$needed")(highest GLIBC_$top, floor $floor)"
done
"$dir/gpudoctor" --version | grep -q '^gpudoctor ' || fail "gpudoctor --version"
set +e
out=$("$dir/gpudoctor" check --from "$src/tests/snapshots/ws-4x4090-ulimit.json" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "memory.address-space-limit" <<<"$out" ||
  fail "check --from the demo snapshot exited $rc: $out"
out=$(printf 'RuntimeError: CUDA error: out of memory\n' | "$dir/gpudoctor" explain 2>&1 || true)
grep -q "out of memory" <<<"$out" || fail "explain: $out"
echo "release_check: ok"
