#!/usr/bin/env bash
# Sets up, builds and runs `gpudoctor check` on this machine. On a machine
# without an NVIDIA driver it then shows what a report looks like on a
# recorded 4 x RTX 4090 workstation where CUDA fails to start.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh || exit 1
cmake -S . -B build -G Ninja >/dev/null || exit 1
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
