#!/usr/bin/env bash
# `gpudoctor diag --level 2` on a GPU machine, side by side with the
# machine's own PyTorch, in one call (issue 6; bench/README.md).
#
#   bash bench/diag_gpu.sh          (from anywhere; on the GPU machine)
#
# Steps, each under `timeout`, the whole run under $GD_BUDGET_S (540 s):
#   1. timing: `gpudoctor check` against `nvidia-smi -q` and
#      `python3 -c "import torch; torch.cuda.is_available()"` without and
#      with PYTORCH_NVML_BASED_CUDA_CHECK=1 (bench/diag_compare.py timing),
#      first, while the GPU is idle;
#   2. bench/diag_torch.py: the same GEMMs and copies through PyTorch
#      (skipped, and said so, when `python3 -c "import torch"` fails);
#   3. gpudoctor diag --level 2 --duration $DIAG_DURATION (20) --json
#      --no-history, after PyTorch, so gpudoctor meets the warmer GPU;
#   4. the planted faults: --plant-fault gemm and --plant-fault memory at
#      --duration $FAULT_DURATION (5);
#   5. bench/diag_compare.py: the table (gpudoctor | PyTorch | ratio | goal),
#      the faults (caught / NOT caught), the timings; --save writes
#      diag_gpu.txt, which a session copies to bench/diag_gpu.txt.
#
# gpudoctor: $GD_BIN_DIR, else build-device/ (scripts/device-check.sh
# --stage), else build/. The helper gpudoctor-diag beside it links cuBLAS
# and NCCL (libcublas.so.13, libcublasLt.so.13, libnccl.so.2: about 800 MB,
# too big to carry), so they are looked for on the machine: where the loader
# already finds them, else a CUDA toolkit (/usr/local/cuda*), else the
# nvidia-* wheels in python3's site-packages (nvidia/*/lib); the directories
# found go on LD_LIBRARY_PATH for the diag runs alone. None found: one line
# says so, the diag runs are skipped, the rest still runs.
#
# Output: ${OUT:-./diag-out}/ holds diag_gpu.txt (the summary),
# diag-gpu.log (this console) and diag-raw.tar.gz (raw/: every report,
# torch.json, compare.txt/json, timing.json/txt, machine.txt, steps.tsv,
# stderr files). raw/ itself is removed after packing (the device tool
# brings back 8 files at most) unless DIAG_KEEP_RAW=1.
#
# Exit status: 0 the summary was written (goals not met and faults not
# caught are in it, not in the exit status); 1 diag_compare.py could not
# read an input; 3 no runnable gpudoctor (timings of the others still run).
#
# Knobs: DIAG_DURATION, FAULT_DURATION, TORCH_GEMM_S (10), TORCH_COPY_S (5),
# TIMING_RUNS (10), TIMING_SLOW_RUNS (3), GD_BUDGET_S, PYTHON (python3),
# DIAG_LIB_DIRS (extra directories searched for the helper's libraries,
# before the toolkit), DIAG_KEEP_RAW.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
OUT=${OUT:-./diag-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
raw=$OUT/raw
rm -rf "$raw"
mkdir -p "$raw"
exec > >(tee "$OUT/diag-gpu.log") 2>&1

DIAG_DURATION=${DIAG_DURATION:-20}
FAULT_DURATION=${FAULT_DURATION:-5}
TORCH_GEMM_S=${TORCH_GEMM_S:-10}
TORCH_COPY_S=${TORCH_COPY_S:-5}
TIMING_RUNS=${TIMING_RUNS:-10}
TIMING_SLOW_RUNS=${TIMING_SLOW_RUNS:-3}
budget=${GD_BUDGET_S:-540}
start=$(date +%s)
PY=${PYTHON:-python3}
command -v "$PY" > /dev/null 2>&1 || PY=/usr/bin/python3
printf 'step\texit\tseconds\tcommand\n' > "$raw/steps.tsv"

# Packs raw/ into one file whatever happens (the device tool returns at most
# 8 files); on a signal too, so a run cut short still brings back its parts.
# shellcheck disable=SC2317  # called by the traps
pack() {
  trap - EXIT INT TERM
  tar -czf "$OUT/diag-raw.tar.gz" -C "$OUT" raw 2> /dev/null || true
  [ "${DIAG_KEEP_RAW:-0}" = 1 ] || rm -rf "$raw"
}
trap pack EXIT
trap 'echo "diag_gpu: interrupted"; exit 130' INT TERM

# path_join A B ...: the non-empty ones joined with ':' (an empty element of
# LD_LIBRARY_PATH would mean the current directory).
path_join() {
  local out="" p
  for p in "$@"; do [ -n "$p" ] && out=${out:+$out:}$p; done
  echo "$out"
}

remaining() { echo $((budget - ($(date +%s) - start))); }

# step NAME TIMEOUT_S OUTFILE CMD...: CMD's stdout to raw/OUTFILE, stderr to
# raw/OUTFILE.stderr (removed when empty), a row in steps.tsv; the exit status
# (124: timed out, 125: no time left) in $rc. Never fails the script.
rc=0
step() {
  local name=$1 t=$2 file=$3
  shift 3
  local left
  left=$(remaining)
  if [ "$left" -lt 10 ]; then
    printf '%s\tskipped\t0\tout of time budget\n' "$name" >> "$raw/steps.tsv"
    echo "diag_gpu: $name skipped (time budget spent)"
    rc=125
    return 0
  fi
  [ "$t" -gt $((left - 5)) ] && t=$((left - 5))
  local t0 ms
  t0=$(date +%s%N)
  rc=0
  timeout -k 5 "$t" "$@" > "$raw/$file" 2> "$raw/$file.stderr" < /dev/null || rc=$?
  [ -s "$raw/$file.stderr" ] || rm -f "$raw/$file.stderr"
  ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%s\t%s\t%d.%03d\t%s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "$*" >> "$raw/steps.tsv"
  echo "diag_gpu: $name -> exit $rc ($((ms / 1000)) s)"
  return 0
}

valid_json() { [ -s "$1" ] && "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2> /dev/null; }

# ---------------------------------------------------------------- gpudoctor
bin=""
for d in ${GD_BIN_DIR:-} build-device build; do
  if [ -n "$d" ] && [ -x "$d/gpudoctor" ]; then bin=$(cd "$d" && pwd); break; fi
done
GD=""
gd_ld=""
if [ -n "$bin" ]; then
  for try in "" "$bin/lib" "$bin/lib:$bin/lib-cxx"; do
    if LD_LIBRARY_PATH=$(path_join "$try" "${LD_LIBRARY_PATH:-}") timeout 10 "$bin/gpudoctor" --version > "$raw/gpudoctor-version.txt" 2>&1; then
      GD=$bin/gpudoctor
      gd_ld=$try
      break
    fi
  done
fi
gd_missing="no runnable gpudoctor (GD_BIN_DIR, build-device/, build/; stage one with scripts/device-check.sh --stage)"
[ -n "$GD" ] || echo "diag_gpu: $gd_missing"

# ---------------------------------------------------------------- the helper's libraries
# Directories holding NAME, in order of preference: DIAG_LIB_DIRS, a CUDA
# toolkit, then the nvidia-* wheels in site-packages (nvidia/cu13/lib,
# nvidia/cublas/lib, nvidia/nccl/lib).
lib_dirs() {
  local d
  for d in ${DIAG_LIB_DIRS:-} ${CUDA_HOME:+$CUDA_HOME/lib64 $CUDA_HOME/lib} \
    /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
    /usr/local/cuda-*/lib64 /usr/local/cuda-*/lib /usr/local/cuda-*/targets/x86_64-linux/lib; do
    [ -d "$d" ] && echo "$d"
  done
  "$PY" -c 'import sys; print("\n".join(p for p in sys.path if p))' 2> /dev/null |
    while read -r p; do
      if [ -d "$p/nvidia" ]; then find "$p/nvidia" -maxdepth 3 -type d -name lib 2> /dev/null | sort; fi
    done
  return 0
}
helper=""
diag_ld=""
diag_skip=""
if [ -n "$GD" ]; then
  [ -x "$bin/gpudoctor-diag" ] && helper=$bin/gpudoctor-diag
  if [ -n "$helper" ]; then
    # Rounds: a library found (libcublas.so.13) can need more (libcublasLt.so.13).
    candidates=$(lib_dirs)
    unresolved=""
    for _round in 1 2 3; do
      missing=$(LD_LIBRARY_PATH=$(path_join "$gd_ld" "$diag_ld" "${LD_LIBRARY_PATH:-}") ldd "$helper" 2>&1 | awk '/=> not found/ {print $1}' | sort -u || true)
      [ -n "$missing" ] || break
      unresolved=""
      added=0
      for lib in $missing; do
        found=""
        for d in $candidates; do
          if [ -e "$d/$lib" ]; then found=$d; break; fi
        done
        if [ -z "$found" ]; then
          unresolved="$unresolved $lib"
        elif [[ ":$diag_ld:" != *":$found:"* ]]; then
          diag_ld=${diag_ld:+$diag_ld:}$found
          added=1
        fi
      done
      [ "$added" = 1 ] || break
    done
    if [ -n "$unresolved" ]; then
      diag_skip="gpudoctor-diag needs${unresolved}: not on this machine (no loader path, no CUDA toolkit, no nvidia-cublas/nvidia-nccl wheel in $PY's site-packages); diag runs skipped"
      echo "diag_gpu: $diag_skip"
    fi
  else
    echo "diag_gpu: no gpudoctor-diag beside $GD; gpudoctor diag looks for its own helper"
  fi
else
  diag_skip=$gd_missing
fi
# gpudoctor itself keeps its own path; the helper's directories come after.
diag_env=(env "LD_LIBRARY_PATH=$(path_join "$gd_ld" "$diag_ld" "${LD_LIBRARY_PATH:-}")")
helper_args=()
[ -n "$helper" ] && helper_args=(--helper "$helper")

# ---------------------------------------------------------------- PyTorch
torch_skip=""
if ! timeout 120 "$PY" -c "import torch" > "$raw/torch-import.txt" 2>&1; then
  torch_skip="no PyTorch: $PY -c 'import torch' failed ($(tail -1 "$raw/torch-import.txt"))"
  echo "diag_gpu: $torch_skip"
fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -n) $(uname -r) $(uname -m)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "driver: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo 'no /proc/driver/nvidia/version')"
  echo "gpus: $(timeout 20 nvidia-smi -L 2>/dev/null | tr '\n' ';' || echo 'no nvidia-smi -L')"
  echo "python3: $(command -v "$PY") $("$PY" --version 2>&1)"
  echo "torch: $([ -z "$torch_skip" ] && timeout 60 "$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1 || echo "$torch_skip")"
  echo "gpudoctor: ${GD:-none} $(head -1 "$raw/gpudoctor-version.txt" 2>/dev/null); LD_LIBRARY_PATH added: '${gd_ld}'"
  if [ -n "$bin" ] && [ -e "$bin/STAGED" ]; then echo "staged: $(tr '\n' ';' < "$bin/STAGED")"; else echo "staged: no STAGED file"; fi
  echo "helper: ${helper:-none}; its libraries from: '${diag_ld:-the loader}'${diag_skip:+; $diag_skip}"
  # Loads at all? (a cuBLAS older than the one it was built with fails here)
  if [ -n "$helper" ] && [ -z "$diag_skip" ]; then
    echo "helper --help: $("${diag_env[@]}" timeout 20 "$helper" --help > "$raw/helper-help.txt" 2>&1 && echo ok || echo "exit $?: $(tail -1 "$raw/helper-help.txt")")"
  fi
} > "$raw/machine.txt" 2>&1
cat "$raw/machine.txt"
[ -n "$helper" ] && { LD_LIBRARY_PATH="${diag_ld}" ldd "$helper" > "$raw/helper-ldd.txt" 2>&1 || true; }

# ---------------------------------------------------------------- 1. timing
timing_args=(--runs "$TIMING_RUNS" --slow-runs "$TIMING_SLOW_RUNS" --python "$PY"
  --out "$raw/timing.json" --text "$raw/timing.txt" --gd-missing "$gd_missing")
[ -n "$GD" ] && timing_args+=(--gpudoctor "$GD" --gd-ld "$gd_ld")
[ -n "$torch_skip" ] && timing_args+=(--no-torch "$torch_skip")
step timing 240 timing.stdout "$PY" bench/diag_compare.py timing "${timing_args[@]}"
timing_rc=$rc
[ -s "$raw/timing.txt" ] && cat "$raw/timing.txt"

# ---------------------------------------------------------------- 2. PyTorch
if [ -z "$torch_skip" ]; then
  step torch $((4 * TORCH_GEMM_S + 3 * TORCH_COPY_S + 120)) torch.stdout \
    "$PY" bench/diag_torch.py --gemm-seconds "$TORCH_GEMM_S" --copy-seconds "$TORCH_COPY_S" --out "$raw/torch.json"
  valid_json "$raw/torch.json" || torch_skip="diag_torch.py gave no result (exit $rc; raw/torch.stdout.stderr)"
fi

# ---------------------------------------------------------------- 3, 4. gpudoctor diag
# diag NAME TIMEOUT_S DURATION [ARGS...]: its report in raw/NAME.json; sets
# $why to "" when that is a readable report, else to why not.
why=""
diag() {
  local name=$1 t=$2 duration=$3
  shift 3
  why=""
  if [ -n "$diag_skip" ]; then why=$diag_skip; return 0; fi
  # Exit 0/1/2 is the verdict; the report is what counts.
  step "$name" "$t" "$name.json" "${diag_env[@]}" "$GD" diag --level 2 --duration "$duration" \
    --json --no-history "${helper_args[@]}" "$@"
  valid_json "$raw/$name.json" || why="no readable report (exit $rc; raw/$name.json.stderr)"
  return 0
}
diag diag-l2 $((DIAG_DURATION * 12 + 60)) "$DIAG_DURATION"
diag_why=$why
diag fault-gemm $((FAULT_DURATION * 12 + 60)) "$FAULT_DURATION" --plant-fault gemm
gemm_why=$why
diag fault-memory $((FAULT_DURATION * 12 + 60)) "$FAULT_DURATION" --plant-fault memory
memory_why=$why

# ---------------------------------------------------------------- 5. compare
cmp=(--machine "$raw/machine.txt" --json "$raw/compare.json" --save "$OUT/diag_gpu.txt")
if [ -z "$diag_why" ]; then cmp+=(--diag "$raw/diag-l2.json"); else cmp+=(--skip "diag=$diag_why"); fi
if [ -z "$torch_skip" ]; then cmp+=(--torch "$raw/torch.json"); else cmp+=(--skip "torch=$torch_skip"); fi
if [ -z "$gemm_why" ]; then cmp+=(--fault "gemm=$raw/fault-gemm.json"); else cmp+=(--skip "fault-gemm=$gemm_why"); fi
if [ -z "$memory_why" ]; then cmp+=(--fault "memory=$raw/fault-memory.json"); else cmp+=(--skip "fault-memory=$memory_why"); fi
if valid_json "$raw/timing.json"; then cmp+=(--timing "$raw/timing.json"); else cmp+=(--skip "timing=diag_compare.py timing gave no result (exit $timing_rc)"); fi
status=0
"$PY" bench/diag_compare.py "${cmp[@]}" > "$raw/compare.txt" 2> "$raw/compare.stderr" || status=1
[ -s "$raw/compare.stderr" ] || rm -f "$raw/compare.stderr"
echo
if [ "$status" = 0 ]; then
  cat "$OUT/diag_gpu.txt"
else
  echo "diag_gpu: diag_compare.py failed: $(cat "$raw/compare.stderr" 2>/dev/null)"
fi
[ -z "$GD" ] && [ "$status" = 0 ] && status=3
echo "diag_gpu: done in $(($(date +%s) - start)) s, exit $status; $OUT: diag_gpu.txt (copy to bench/diag_gpu.txt), diag-gpu.log, diag-raw.tar.gz"
exit "$status"
