#!/usr/bin/env bash
# The whole test suite: dependencies, a warnings-as-errors release build
# with every end-to-end test, the format check, clang-tidy on src/, the release
# artifacts built and tried (x86_64 and aarch64), then the unit tests and the
# end-to-end tests again under AddressSanitizer + UndefinedBehaviorSanitizer (a
# clang build that also holds the fuzz targets).
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
# Downloads that wait on the network, not the CPU, start now and run beside
# the builds: the Debian 11, 12 and 13 chroots the release artifacts are
# tried in, and what the aarch64 cross build needs (its compiler, Debian's
# arm64 libraries, Debian 11's arm64 glibc). Each is waited for where used.
mkdir -p build-logs
(for suite in bullseye bookworm trixie; do bash tests/packages/chroot.sh "$suite"; done) \
  >build-logs/chroots.log 2>&1 &
chroots_pid=$!
(bash scripts/cross-deps.sh && bash scripts/sysroot.sh aarch64) >build-logs/cross.log 2>&1 &
cross_pid=$!
# waits for one of them, printing its log if it failed.
wait_for() {
  wait "$1" || { cat "$2"; echo "test.sh: $2 failed" >&2; exit 1; }
}

stage "Debian 11's glibc for the release link (scripts/sysroot.sh)"
bash scripts/sysroot.sh x86_64

stage "format check (clang-format, .clang-format)"
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'fuzz/*.cc' 'fuzz/*.h' \
  'gpu/*.cc' 'gpu/*.h' 'gpu/*.cu')
clang-format --dry-run --Werror "${files[@]}"

stage "build (warnings are errors) and test"
# The configurations are CMakePresets.json's: "test" (gcc, -O2 with line
# tables; also the release build, so what ships is what the tests ran) here,
# "sanitize" (clang) below. The unit tests are built and run once, in the
# sanitizer build, where they find the most; this build runs every
# end-to-end test through the binaries it ships (docs/development.md).
cmake --preset test -DGD_UNIT_TESTS=OFF >/dev/null
cmake --build build -j "$jobs"
# clang-tidy needs only the compile commands, and parses every file again:
# about 18 CPU minutes. At the lowest priority it takes the CPU the test
# stages below leave idle (tests that wait on children, sockets and deadlines)
# without slowing them; its verdict is collected at the end.
nice -n 19 bash scripts/tidy.sh build >build/tidy.out 2>&1 &
tidy_pid=$!
# The aarch64 release binaries compile from here on in the same way, on the
# CPU the tests and the packaging stages below leave idle (they wait on
# children, sockets, packaging tools, chroots and containers); they need
# this build's man pages. Their checks run at the aarch64 stage.
wait_for "$cross_pid" build-logs/cross.log
nice -n 19 bash scripts/release.sh --arch aarch64 >build-logs/aarch64.log 2>&1 &
aarch64_pid=$!
ctest --test-dir build --output-on-failure -j "$jobs"

stage "release binaries (x86_64): stripped, glibc only, floor, smoke runs"
bash scripts/release.sh --build-dir build

stage "Debian packages: cpack, install, use, remove"
bash tests/packages/deb_test.sh build
# Installs the .deb the deb test left in build/packages/, and purges it.
stage "Ansible role: ansible-playbook against localhost (pass and fail plays)"
bash tests/deploy/ansible_test.sh build
# After the two above, which remove their packages again: the wheel's
# "neither found" check needs a machine without an installed libgpudoctor.
stage "Python wheel: build, install into a fresh venv, use"
bash tests/packages/wheel_test.sh build
stage "release packages (x86_64): tarball, .rpm, .deb in a Debian 12 chroot"
# After deb_test.sh, which empties build/packages.
bash scripts/package.sh build
bash tests/packages/tarball_test.sh build
bash tests/packages/rpm_test.sh build
wait_for "$chroots_pid" build-logs/chroots.log
bash tests/packages/deb_chroot_test.sh build bookworm
stage "container image from the release tarball: build, inspect, run (podman, else chroot)"
bash tests/deploy/container_test.sh build
stage "release binaries and the manylinux wheel in Debian 11, 12 and 13 chroots"
bash scripts/wheel.sh build/dist build/wheel
bash tests/packages/chroot_test.sh build/dist build/wheel/gpudoctor-*-manylinux_*.whl

stage "aarch64: cross-built release binaries, run under qemu; their packages"
wait_for "$aarch64_pid" build-logs/aarch64.log
grep -E '^(release|release_check):' build-logs/aarch64.log
bash scripts/package.sh build-aarch64
bash tests/packages/tarball_test.sh build-aarch64
bash tests/packages/rpm_test.sh build-aarch64
bash tests/packages/deb_chroot_test.sh build-aarch64
bash scripts/wheel.sh build-aarch64/dist build-aarch64/wheel

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
