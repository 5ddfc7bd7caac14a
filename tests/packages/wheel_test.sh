#!/usr/bin/env bash
# The `gpudoctor` Python wheel end to end: built from python/ (pyproject.toml)
# offline, installed with pip --no-index into a fresh virtual environment, and
# used there (tests/packages/wheel_check.py) against BUILD_DIR's gpudoctor,
# libgpudoctor and fake NVML/CUDA, found as a user's environment finds them:
#
#   - the build tree on PATH (binary and library side by side);
#   - an installed prefix, its bin/gpudoctor reached through a symlink on PATH
#     (the library in the prefix's libdir, as cmake --install lays it out);
#   - GPUDOCTOR_EXE, with no gpudoctor on PATH;
#   - neither binary nor library: one clear error naming what was looked for;
#   - the library but no binary: the library's error naming GPUDOCTOR_EXE;
#   - the wheel's `gpudoctor` command (python -m gpudoctor): the binary on
#     PATH, never the venv's own script; one line where there is none;
#   - the bundled wheel (scripts/wheel.sh) from BUILD_DIR's binary and
#     library: its tag, its contents, used with nothing on PATH, and its
#     refusal where the system glibc is below its tag.
#
#   tests/packages/wheel_test.sh BUILD_DIR
#
# Needs Debian's python3-venv python3-pip python3-setuptools python3-wheel
# (scripts/deps.sh --test); $PYTHON picks another python3 that has them.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:?usage: wheel_test.sh BUILD_DIR}")
python=${PYTHON:-/usr/bin/python3}
fail() { echo "wheel_test: FAIL: $*" >&2; exit 1; }
for f in gpudoctor libgpudoctor.so.0 fakes/libcuda.so.1 fakes/libcudart.so.13 fakes/libnvidia-ml.so.1; do
  [ -e "$build/$f" ] || fail "no $build/$f (build first)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^project(gpudoctor VERSION \([0-9][0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no 'project(gpudoctor VERSION ...' line in CMakeLists.txt"

# The wheel, from a copy of python/ and CMakeLists.txt (setup.py reads the
# version there): setuptools writes build/ and *.egg-info into the tree it
# builds, and a developer's leftovers there must not get into the wheel.
mkdir "$tmp/src"
tar -C "$src" --exclude=build --exclude=dist --exclude='*.egg-info' --exclude=__pycache__ \
  -cf - python CMakeLists.txt | tar -C "$tmp/src" -xf -
"$python" -m pip wheel -q --no-deps --no-build-isolation --no-index --no-cache-dir --disable-pip-version-check \
  -w "$tmp/dist" "$tmp/src/python" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "pip wheel"; }
wheel=$tmp/dist/gpudoctor-$version-py3-none-any.whl
[ -f "$wheel" ] || fail "built $(ls "$tmp/dist"), not ${wheel##*/}"
contents=$("$python" -c 'import sys, zipfile
print(" ".join(n for n in sorted(zipfile.ZipFile(sys.argv[1]).namelist()) if ".dist-info/" not in n))' "$wheel")
[ "$contents" = "gpudoctor/__init__.py gpudoctor/__main__.py" ] ||
  fail "${wheel##*/} holds '$contents', not the module alone"
echo "wheel_test: built ${wheel##*/}"

venv=$tmp/venv
"$python" -m venv "$venv" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "python3 -m venv (python3-venv)"; }
"$venv/bin/python" -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check "$wheel" \
  >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "pip install --no-index ${wheel##*/}"; }

# Each check in a clean environment: no GPUDOCTOR_LIB, GPUDOCTOR_EXE,
# PYTHONPATH or LD_LIBRARY_PATH of the caller's, and a directory outside the
# source tree, so that only the installed wheel can be imported.
empty=$tmp/empty-bin
mkdir "$empty" "$tmp/cwd"
check() {  # check PATH [VAR=value...] -- wheel_check.py arguments
  local path=$1
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  (cd "$tmp/cwd" && env -i HOME="$tmp" PATH="$path" PYTHONDONTWRITEBYTECODE=1 "${vars[@]}" \
    "$venv/bin/python" "$src/tests/packages/wheel_check.py" "$@") || fail "wheel_check.py $*"
}
found=(found "$src" "$build/fakes")

check "$build:/usr/bin:/bin" -- "${found[@]}" "$build/libgpudoctor.so.0" "$version"

# An installed prefix, laid out as the build's CMAKE_INSTALL_BINDIR and
# _LIBDIR say (the library finds the binary from its libdir by that layout).
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
bindir=$(cache CMAKE_INSTALL_BINDIR)
libdir=$(cache CMAKE_INSTALL_LIBDIR)
case "$bindir$libdir" in
  "" | /*) fail "the build's install dirs ('$bindir', '$libdir') are not relative to the prefix" ;;
esac
prefix=$tmp/prefix
mkdir -p "$prefix/$bindir" "$prefix/$libdir" "$tmp/home-bin"
cp -L "$build/gpudoctor" "$prefix/$bindir/"
cp -L "$build/libgpudoctor.so.0" "$prefix/$libdir/"
ln -s "$prefix/$bindir/gpudoctor" "$tmp/home-bin/gpudoctor"
check "$tmp/home-bin:/usr/bin:/bin" -- "${found[@]}" "$prefix/$libdir/libgpudoctor.so.0" "$version"

check "$empty" GPUDOCTOR_EXE="$build/gpudoctor" -- "${found[@]}" "$build/libgpudoctor.so.0" "$version"

# Neither binary nor library: only provable where the system loader has no
# libgpudoctor of its own (the Debian package installed, say).
if env -i "$venv/bin/python" -c 'import ctypes; ctypes.CDLL("libgpudoctor.so.0")' 2>/dev/null; then
  echo "wheel_test: SKIPPED the missing-library check: the system loader finds a libgpudoctor.so.0"
else
  check "$empty" -- missing "$venv"
fi

# The library alone, no binary beside it or on PATH: only provable where the
# library's configured bindir has none either.
mkdir "$tmp/lib-only"
cp -L "$build/libgpudoctor.so.0" "$tmp/lib-only/"
installed_bin=$(cache CMAKE_INSTALL_PREFIX)/$bindir/gpudoctor
if [ -x "$installed_bin" ]; then
  echo "wheel_test: SKIPPED the missing-binary check: $installed_bin exists"
else
  check "$empty" GPUDOCTOR_LIB="$tmp/lib-only/libgpudoctor.so.0" -- no-binary
fi

# The pure wheel's `gpudoctor` command (and python -m gpudoctor) runs the
# binary on PATH, its exit code the binary's own; in an activated venv its
# own bin/gpudoctor (a Python script) comes first on PATH and is skipped, by
# the command and by the module looking for the library.
expect() {  # expect RC PATTERN PATH COMMAND...: runs in a clean environment
  local want=$1 pattern=$2 path=$3 out rc
  shift 3
  rc=0
  out=$(cd "$tmp/cwd" && env -i HOME="$tmp" PATH="$path" PYTHONDONTWRITEBYTECODE=1 "$@" 2>&1) || rc=$?
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    fail "$*: exit $rc (want $want), '$pattern' not in: $out"
  fi
}
snapshot=$src/tests/snapshots/ws-4x4090-ulimit.json
expect 0 "^gpudoctor $version\$" "$venv/bin:$build:/usr/bin:/bin" gpudoctor --version
expect 2 'memory\.address-space-limit' "$venv/bin:$build:/usr/bin:/bin" gpudoctor check --from "$snapshot"
expect 64 . "$venv/bin:$build:/usr/bin:/bin" "$venv/bin/python" -m gpudoctor --no-such-option
check "$venv/bin:$build:/usr/bin:/bin" -- "${found[@]}" "$build/libgpudoctor.so.0" "$version"
expect 3 '^gpudoctor: no gpudoctor binary: .*none on PATH, GPUDOCTOR_EXE not set' "$venv/bin:/usr/bin:/bin" \
  "$venv/bin/gpudoctor" --version
[ "$(cd "$tmp/cwd" && env -i PATH="$venv/bin:/usr/bin:/bin" "$venv/bin/gpudoctor" --version 2>&1 | wc -l)" = 1 ] ||
  fail "the pure wheel's gpudoctor with no binary: not one line"
echo "wheel_test: the pure wheel's gpudoctor command: ok"

# The bundled wheel (scripts/wheel.sh) from this build's binary and library,
# stripped as a release's are: tagged for their glibc (never below 2.31) and
# machine, and used with nothing of gpudoctor's on PATH.
mkdir "$tmp/bundle"
strip --strip-all -o "$tmp/bundle/gpudoctor" "$build/gpudoctor"
strip --strip-unneeded -o "$tmp/bundle/libgpudoctor.so.0" "$build/libgpudoctor.so.0"
glibc=$(objdump -T "$tmp/bundle/gpudoctor" "$tmp/bundle/libgpudoctor.so.0" | grep -o 'GLIBC_[0-9]*\.[0-9]*' |
  sed 's/GLIBC_//' | { cat; echo 2.31; } | sort -uV | tail -1)
arch=$(objdump -f "$tmp/bundle/gpudoctor" | sed -n 's/^architecture: i386:x86-64.*/x86_64/p; s/^architecture: aarch64.*/aarch64/p')
made=$(PYTHON=$python bash "$src/scripts/wheel.sh" "$tmp/bundle" "$tmp/bundled-dist") || fail "scripts/wheel.sh"
bundled=$tmp/bundled-dist/gpudoctor-$version-py3-none-manylinux_${glibc/./_}_$arch.whl
[ "${made%% *}" = "$bundled" ] || fail "scripts/wheel.sh made '$made', not $bundled"
contents=$("$python" -c 'import sys, zipfile
print(" ".join(n for n in sorted(zipfile.ZipFile(sys.argv[1]).namelist()) if ".dist-info/" not in n))' "$bundled")
[ "$contents" = "gpudoctor/__init__.py gpudoctor/__main__.py gpudoctor/_bundle.py gpudoctor/gpudoctor gpudoctor/libgpudoctor.so.0" ] ||
  fail "${bundled##*/} holds '$contents'"
venv2=$tmp/venv-bundled
"$python" -m venv "$venv2" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "python3 -m venv"; }
"$venv2/bin/python" -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check "$bundled" \
  >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "pip install --no-index ${bundled##*/}"; }
package=$("$venv2/bin/python" -c 'import os, gpudoctor; print(os.path.dirname(gpudoctor.__file__))')
expect 0 "^gpudoctor $version\$" "$empty" "$venv2/bin/gpudoctor" --version
expect 2 'memory\.address-space-limit' "$empty" "$venv2/bin/gpudoctor" check --from "$snapshot"
expect 0 "^gpudoctor $version\$" "$empty" "$venv2/bin/python" -m gpudoctor --version
# The library in the package, and the binary beside it, with neither on PATH.
(cd "$tmp/cwd" && env -i HOME="$tmp" PATH="$empty" PYTHONDONTWRITEBYTECODE=1 \
  "$venv2/bin/python" "$src/tests/packages/wheel_check.py" "${found[@]}" "$package/libgpudoctor.so.0" "$version") ||
  fail "wheel_check.py found, the bundled wheel"
# A system glibc below the wheel's: one line, exit 3, not the loader's error.
# (pip compiled the module at install: the stale .pyc, of the same size and
# maybe the same second, would win.)
sed -i 's/^GLIBC_FLOOR = .*/GLIBC_FLOOR = (99, 0)/' "$package/_bundle.py"
rm -r "$package/__pycache__"
expect 3 "^gpudoctor: the gpudoctor binary in this wheel needs glibc 99\.0 or newer \(manylinux_${glibc/./_}_$arch\); this system has glibc [0-9.]+; " \
  "$empty" "$venv2/bin/gpudoctor" --version
echo "wheel_test: the bundled wheel ${bundled##*/}: ok"
echo "wheel_test: ok (${wheel##*/} built, installed into a fresh venv, used, removed)"
