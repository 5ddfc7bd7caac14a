#!/usr/bin/env bash
# Sets up, builds and runs `gpudoctor check` on this machine. On a machine
# without an NVIDIA driver it then shows what a report looks like on a
# recorded 4 x RTX 4090 workstation where CUDA fails to start.
#
# It installs only what building and running need (scripts/deps.sh without
# --test): no test tools, no service. A first build leaves the tests out
# (GD_TESTS=OFF); a build directory scripts/test.sh made keeps them.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh || exit 1
tests=()
[ -e build/CMakeCache.txt ] || tests=(-DGD_TESTS=OFF)
cmake -S . -B build -G Ninja "${tests[@]}" >/dev/null || exit 1
cmake --build build --target gpudoctor || exit 1

./build/gpudoctor check
rc=$?
echo "(gpudoctor check exited $rc)"
if [ ! -e /proc/driver/nvidia ]; then
  demo=tests/snapshots/ws-4x4090-ulimit.json
  echo
  echo "== No NVIDIA driver here. Demo on a recorded machine: gpudoctor check --from $demo =="
  ./build/gpudoctor check --from "$demo"
  echo "(demo exited $?)"
fi
exit $rc
