#!/usr/bin/env bash
# The whole test suite: dependencies, a warnings-as-errors build with every
# unit and end-to-end test, the format check, then the same tests once more
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

echo "== format check (clang-format, .clang-format)"
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'fuzz/*.cc' 'fuzz/*.h' \
  'gpu/*.cc' 'gpu/*.h' 'gpu/*.cu')
clang-format --dry-run --Werror "${files[@]}"

echo "== build (warnings are errors) and test"
cmake -S . -B build -G Ninja -DGD_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build and test under ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DGD_WERROR=ON -DGD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
