#!/usr/bin/env bash
# The whole test suite: dependencies, a warnings-as-errors build with every
# unit and end-to-end test, the format check, clang-tidy on src/, then the same
# tests once more under AddressSanitizer + UndefinedBehaviorSanitizer (a clang
# build that also holds the fuzz targets).
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
# The configurations are CMakePresets.json's: "test" (gcc, -O2 with line
# tables) here, "sanitize" (clang) below.
cmake --preset test >/dev/null
cmake --build build -j "$jobs"
# clang-tidy needs only the compile commands, and parses every file again:
# about 18 CPU minutes. At the lowest priority it takes the CPU the test
# stages below leave idle (tests that wait on children, sockets and deadlines)
# without slowing them; its verdict is collected at the end.
nice -n 19 bash scripts/tidy.sh build >build/tidy.out 2>&1 &
tidy_pid=$!
ctest --test-dir build --output-on-failure -j "$jobs"

stage "Debian packages: cpack, install, use, remove"
bash tests/packages/deb_test.sh build
# Installs the .deb the deb test left in build/packages/, and purges it.
stage "Ansible role: ansible-playbook against localhost (pass and fail plays)"
bash tests/deploy/ansible_test.sh build
# After the two above, which remove their packages again: the wheel's
# "neither found" check needs a machine without an installed libgpudoctor.
stage "Python wheel: build, install into a fresh venv, use"
bash tests/packages/wheel_test.sh build
stage "container image: build, inspect, run (podman, else chroot)"
bash tests/deploy/container_test.sh build

# clang, so a second compiler's warnings are errors too; the same build holds
# the fuzz targets that .ci/run then runs (scripts/fuzz.sh).
stage "build (clang) and test under ASan + UBSan"
cmake --preset sanitize >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

stage "clang-tidy on src/ (.clang-tidy; started after the build, in the background)"
if ! wait "$tidy_pid"; then
  cat build/tidy.out
  exit 1
fi
cat build/tidy.out
stage "done"
echo "== stage times: $(IFS=';'; echo "${stage_times[*]}")"
