#!/usr/bin/env bash
# libFuzzer targets (fuzz/): builds them in the sanitizer build (the
# "sanitize" preset of CMakePresets.json: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, libFuzzer's coverage on src/), which
# scripts/test.sh has already built in CI, then runs each for FUZZ_SECONDS
# (default 60) on a copy of its seed corpus (fuzz/corpus/<target>/) in a
# temporary directory, so the repository is never written to. Fails when any
# target crashes, leaks, times out or breaks one of its invariants; the
# input that did it is printed (base64) so it can be replayed:
#   base64 -d > crash && build-asan/<target> crash
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --fuzz  # clang and libclang-rt-14-dev (libFuzzer); quick when installed
seconds=${FUZZ_SECONDS:-60}
# A fixed seed makes CI's exploration repeatable (the same inputs in the same
# order, as far as the time allows); FUZZ_SEED=0 lets libFuzzer pick one, for
# longer hunts.
seed=${FUZZ_SEED:-1}
build=${FUZZ_BUILD_DIR:-build-asan}
targets=(fuzz_kmsg fuzz_log_line fuzz_explain fuzz_pci fuzz_config fuzz_history_since fuzz_web_config
  fuzz_slurm fuzz_diag_helper fuzz_http_request fuzz_cdi_spec fuzz_snapshot fuzz_workload)

echo "== fuzz: build (${build}, clang)"
# The build is -O0: libFuzzer runs fewer inputs a second than at -O1, which a
# 30-second regression run on the seed corpus can spare, and one build saves
# CI a second compile of src/ (docs/development.md).
# Configured every time (seconds when nothing changed), so a tree left by an
# older configuration gets the fuzz targets too.
cmake --preset sanitize -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One target: its report on stdout, its status as the exit code.
fuzz_one() {
  local t=$1 log="$work/$1/log"
  mkdir -p "$work/$t/corpus" "$work/$t/crash"
  cp fuzz/corpus/"$t"/* "$work/$t/corpus/"
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/$t" -max_total_time="$seconds" -seed="$seed" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/$t/crash/" "$work/$t/corpus" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    echo "fuzz: $t ok: ${runs:-?} runs in ${seconds}s, ${cov:-cov: ?}," \
      "corpus $(ls "$work/$t/corpus" | wc -l) inputs"
    return 0
  fi
  echo "fuzz: $t FAILED; the end of its log:"
  tail -n 60 "$log"
  for f in "$work/$t/crash"/*; do
    [ -f "$f" ] || continue
    echo "fuzz: $t input $(basename "$f") ($(stat -c %s "$f") bytes), base64:"
    base64 -w 0 "$f"
    echo
  done
  return 1
}

# Each libFuzzer process is single-threaded: run as many at once as there are
# cores, each for its full time, and print their reports in target order.
parallel=${FUZZ_JOBS:-$(nproc)}
failed=0
for ((i = 0; i < ${#targets[@]}; i += parallel)); do
  batch=("${targets[@]:i:parallel}")
  pids=()
  for t in "${batch[@]}"; do
    fuzz_one "$t" >"$work/$t.report" 2>&1 &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    wait "${pids[$j]}" || failed=1
    cat "$work/${batch[$j]}.report"
  done
done
exit "$failed"
