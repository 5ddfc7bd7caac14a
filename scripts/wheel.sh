#!/usr/bin/env bash
# The Python wheel that needs nothing installed: the release build's
# gpudoctor binary and libgpudoctor.so.0 inside the `gpudoctor` package,
# tagged py3-none-manylinux_<glibc>_<arch> from the binaries themselves
# (python/setup.py). A researcher installs it into a virtual environment
# without root (docs/library.md).
#
#   scripts/wheel.sh DIST_DIR OUT_DIR
#
# DIST_DIR holds gpudoctor and libgpudoctor.so.0, stripped, from one release
# build. Prints the wheel's path and size. Built offline with Debian's
# python3-pip, python3-setuptools and python3-wheel ($PYTHON picks another
# python3 that has them); GPUDOCTOR_GLIBC_FLOOR overrides the lowest glibc
# the tag may name (2.31).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dist=$(realpath "${1:?usage: wheel.sh DIST_DIR OUT_DIR}")
out=${2:?usage: wheel.sh DIST_DIR OUT_DIR}
python=${PYTHON:-/usr/bin/python3}
fail() { echo "wheel.sh: $*" >&2; exit 1; }
for f in gpudoctor libgpudoctor.so.0; do
  [ -f "$dist/$f" ] || fail "no $dist/$f"
done
version=$(sed -n 's/^project(gpudoctor VERSION \([0-9][0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no 'project(gpudoctor VERSION ...' line in CMakeLists.txt"
# The binary must be this tree's: the wheel carries CMakeLists.txt's version.
# (Only where it runs here: a cross-built one is taken as it is.)
if have=$("$dist/gpudoctor" --version 2>/dev/null); then
  [ "$have" = "gpudoctor $version" ] || fail "$dist/gpudoctor says '$have', this tree is $version"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# From a copy: setuptools writes build/ and *.egg-info into the tree it
# builds, and a developer's leftovers there must not get into the wheel.
mkdir "$tmp/src" "$tmp/dist"
tar -C "$src" --exclude=build --exclude=dist --exclude='*.egg-info' --exclude=__pycache__ \
  -cf - python CMakeLists.txt | tar -C "$tmp/src" -xf -
GPUDOCTOR_BUNDLE=$dist "$python" -m pip wheel -q --no-deps --no-build-isolation --no-index \
  --no-cache-dir --disable-pip-version-check -w "$tmp/dist" "$tmp/src/python" >"$tmp/log" 2>&1 ||
  { cat "$tmp/log" >&2; fail "pip wheel failed"; }
wheels=("$tmp"/dist/gpudoctor-"$version"-py3-none-manylinux_*.whl)
[ -f "${wheels[0]}" ] || fail "pip built $(ls "$tmp/dist"), no gpudoctor-$version-py3-none-manylinux_*.whl"
mkdir -p "$out"
cp "${wheels[0]}" "$out/"
wheel=$(realpath "$out/${wheels[0]##*/}")
echo "$wheel $(stat -c %s "$wheel") bytes"
