#!/usr/bin/env bash
# The whole test suite: dependencies, a warnings-as-errors build with every
# unit and end-to-end test, the format check, clang-tidy on src/, then the same
# tests once more under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says when it starts (seconds since this script began), and the
# end says how long each took, so a slow stage shows in CI's log.
stage_start=$SECONDS
stage_name="dependencies"
stage_times=()
stage() {
  stage_times+=("$stage_name: $((SECONDS - stage_start)) s")
  stage_name=$1
  stage_start=$SECONDS
  echo "== $1 (at ${SECONDS} s)"
}
bash scripts/deps.sh --test
jobs=$(nproc)

stage "format check (clang-format, .clang-format)"
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'fuzz/*.cc' 'fuzz/*.h' \
  'gpu/*.cc' 'gpu/*.h' 'gpu/*.cu')
clang-format --dry-run --Werror "${files[@]}"

stage "build (warnings are errors) and test"
cmake -S . -B build -G Ninja -DGD_WERROR=ON -DGD_TESTS=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

stage "clang-tidy on src/ (.clang-tidy)"
bash scripts/tidy.sh build

stage "Debian packages: cpack, install, use, remove"
bash tests/packages/deb_test.sh build

stage "build and test under ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DGD_WERROR=ON -DGD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
stage "done"
echo "== stage times: $(IFS=';'; echo "${stage_times[*]}")"
