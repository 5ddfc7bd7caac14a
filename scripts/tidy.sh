#!/usr/bin/env bash
# clang-tidy over every source file of src/ with the checks of .clang-tidy,
# each warning an error. Needs a configured build directory for its compile
# commands (default build/, as scripts/test.sh leaves it):
#   bash scripts/tidy.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: no $build/compile_commands.json; configure with cmake first" >&2
  exit 2
fi
mapfile -t files < <(git ls-files 'src/*.cc')
# run-clang-tidy prints each file's command and output; -quiet keeps only the
# findings. Its exit status is non-zero when any file had a finding.
run-clang-tidy -quiet -p "$build" -j "$(nproc)" "${files[@]/#/$PWD/}" >"$build/tidy.log" 2>&1 || {
  grep -E "(warning|error):" "$build/tidy.log" | sort -u | head -n 200
  echo "tidy: findings in src/ (all of them: $build/tidy.log)" >&2
  exit 1
}
echo "tidy: ${#files[@]} files clean"
