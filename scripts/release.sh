#!/usr/bin/env bash
# The self-contained release binaries (docs/install.md): gpudoctor,
# gpudoctor-serve and libgpudoctor with every third-party library,
# libstdc++ and libgcc inside, linked against Debian 11's glibc (the floor,
# 2.31: cmake/release.cmake, scripts/sysroot.sh). Stripped into
# BUILD_DIR/dist, their debug info in a .debug file beside each (found by
# .gnu_debuglink or the build id), then checked by
# tests/packages/release_check.sh.
#
#   bash scripts/release.sh [--arch x86_64|aarch64] [--build-dir DIR]
#
# x86_64 builds the "release" preset into build-release, unless
# --build-dir names a build of the "test" preset, which is also a release
# build (scripts/test.sh passes build: the binaries shipped are the ones
# the tests ran). aarch64 cross-compiles the "release-aarch64" preset into
# build-aarch64 (scripts/cross-deps.sh) and runs the checks under
# qemu-aarch64-static.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=x86_64
build=""
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs x86_64 or aarch64}; shift 2 ;;
    --build-dir) build=${2:?--build-dir needs a folder}; shift 2 ;;
    *) echo "usage: release.sh [--arch x86_64|aarch64] [--build-dir DIR]" >&2; exit 64 ;;
  esac
done
case $arch in
  x86_64)
    preset=release
    strip=strip objcopy=objcopy run=""
    ;;
  aarch64)
    preset=release-aarch64
    bash scripts/cross-deps.sh >/dev/null
    # The man pages and completions come from an x86_64 build's own run
    # (cmake/packaging.cmake): the test or release preset's.
    host_docs=""
    for dir in build build-release; do
      [ -f "$dir/cli-docs/man/gpudoctor.1" ] && host_docs=$PWD/$dir/cli-docs && break
    done
    [ -n "$host_docs" ] || {
      echo "release.sh: build for x86_64 first (bash scripts/release.sh): its man pages go into the aarch64 packages" >&2
      exit 1
    }
    strip=aarch64-linux-gnu-strip objcopy=aarch64-linux-gnu-objcopy
    run="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
    ;;
  *) echo "release.sh: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 64 ;;
esac
bash scripts/sysroot.sh "$arch" >/dev/null
if [ -z "$build" ]; then
  build=build-$preset
  [ "$arch" = aarch64 ] && build=build-aarch64
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  [ "$arch" = aarch64 ] && launcher+=(-DGD_HOST_CLI_DOCS="$host_docs")
  cmake --preset "$preset" "${launcher[@]}" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target gpudoctor gpudoctor-serve gpudoctor_shared
out=$build/dist
rm -rf "$out"
mkdir -p "$out"
for bin in gpudoctor gpudoctor-serve libgpudoctor.so.0; do
  cp -L "$build/$bin" "$out/$bin"
  $objcopy --only-keep-debug "$out/$bin" "$out/$bin.debug"
  $strip --strip-all "$out/$bin"
  (cd "$out" && $objcopy --add-gnu-debuglink="$bin.debug" "$bin")
  echo "release: $out/$bin $(stat -c %s "$out/$bin") bytes stripped, debug info $(stat -c %s "$out/$bin.debug") bytes"
done
GD_ARCH=$arch GD_RUN=$run GD_GLIBC_FLOOR=$(cat "$build/glibc-floor") \
  bash tests/packages/release_check.sh "$out"
