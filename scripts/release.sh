#!/usr/bin/env bash
# The self-contained release binaries: gpudoctor and gpudoctor-serve built
# with the "release" preset (cmake/release.cmake: third-party libraries,
# libstdc++ and libgcc inside, glibc dynamic), stripped, their debug info in
# a .debug file beside each (linked by .gnu_debuglink), then checked by
# tests/packages/release_check.sh (glibc's libraries only, the glibc floor,
# a smoke run).
#
#   bash scripts/release.sh [OUT_DIR]     (default build-release/dist)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-release/dist}
cmake --preset release >/dev/null
cmake --build build-release -j "$(nproc)" --target gpudoctor gpudoctor-serve
mkdir -p "$out"
for bin in gpudoctor gpudoctor-serve; do
  cp build-release/$bin "$out/$bin"
  objcopy --only-keep-debug "$out/$bin" "$out/$bin.debug"
  strip --strip-all "$out/$bin"
  (cd "$out" && objcopy --add-gnu-debuglink="$bin.debug" "$bin")
  echo "release: $out/$bin $(stat -c %s "$out/$bin") bytes stripped, debug info $(stat -c %s "$out/$bin.debug") bytes"
done
bash tests/packages/release_check.sh "$out"
