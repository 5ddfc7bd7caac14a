#!/usr/bin/env bash
# A running job measured while gpudoctor runs beside it, on a real GPU
# machine (issue 34, "a running job is sacred"; tests/device/README.md,
# "Busy").
#
#   bash scripts/device-busy.sh
#       On the GPU machine, from the repository root, after
#       `bash scripts/device-check.sh --stage` here (the same build-device/
#       carry). Records under ${OUT:-/tmp/device-busy}/busy/:
#         job.jsonl        the job's lines (tests/device/busy_job.py: PyTorch
#                          on GPU 0, 90 % of its free memory held, 8192 x 8192
#                          bf16 products in a loop, one JSON line a second)
#         phases.tsv       idle (before the job), alone (phase A: the job
#                          alone, $GD_BUSY_ALONE_S, 15 s), during (phase B:
#                          gpudoctor beside it), as Unix times
#         steps.tsv        every gpudoctor step: exit status, seconds, start, end
#         check-json-N.json, snapshot-N.json (N = 1..3, one after the other),
#         check-slurm.txt  `check --slurm --slurm-dry-run` where scontrol is
#         serve.stderr, serve-scrapes.tsv, serve-metrics.txt
#                          `gpudoctor serve` (checks every second) until its
#                          gpudoctor_check_runs_total reaches $GD_BUSY_SERVE_RUNS (20)
#         mem.tsv, apps.tsv
#                          GPU 0's memory.used (MiB) and the processes on it
#                          (pid, name, MiB), from nvidia-smi in loop mode
#                          every 100 ms, before the job to the end
#         summary.json, summary.tsv
#                          iterations per second alone and during, their
#                          ratio, the job's errors, each verdict, why the
#                          snapshots opened no context on GPU 0
#                          (cuda.runs[].devices[].ctx_skipped), the most
#                          memory GPU 0 held during phase B beyond phase A's
#                          (MiB; per step too: what a context would cost),
#                          and any process besides the job on GPU 0 then
#
# It never changes device settings (no nvidia-smi -c, clocks, reset or
# persistence mode): the job is an ordinary process, stopped by a file and
# killed at the end; nvidia-smi only reads. Every step runs under `timeout`,
# the whole run under a budget ($GD_BUDGET_S, 150 s): with device-check.sh's
# 240 s and device-faults.sh's 150 s, one device call of at most 9 minutes.
#
# Exit status: 0 the job ran through without an error; 1 the job reported
# an error, or never got going (see job.jsonl, job.stderr); 3 no gpudoctor.
#
# Test hooks (tests/device/test_busy.py runs this against the fake libraries):
# $GD_ARGS is added to every gpudoctor command (--root, --nvml-lib,
# --cuda-lib, --cudart-lib); $GD_JOB_CMD replaces the PyTorch job (it gets
# --stop FILE --max-s S appended, and prints busy_job.py's lines);
# $GD_TORCH_PY is the python with torch ("" none); $GD_BUSY_ALONE_S,
# $GD_BUSY_SERVE_RUNS, $GD_BUSY_SAMPLE_MS (100) size the phases;
# $GD_SCONTROL is the scontrol to use (default: on $PATH) and
# $GD_SLURM_ARGS is added to the Slurm check (--slurm-node NAME);
# $GD_NVIDIA_SMI is the nvidia-smi to sample ("none": no sampling);
# $GD_STEP_TIMEOUT_S caps every step.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 3
OUT=${OUT:-/tmp/device-busy}
B="$OUT/busy"
rm -rf "$B"
mkdir -p "$B"
exec > >(tee "$OUT/device-busy.log") 2>&1
budget=${GD_BUDGET_S:-150}
step_cap=${GD_STEP_TIMEOUT_S:-90}
alone_s=${GD_BUSY_ALONE_S:-15}
serve_runs=${GD_BUSY_SERVE_RUNS:-20}
sample_ms=${GD_BUSY_SAMPLE_MS:-100}
start=$(date +%s)
remaining() { echo $((budget - ($(date +%s) - start))); }
now() { date +%s.%N | cut -c1-14; }
PY=${PYTHON:-python3}
command -v "$PY" > /dev/null 2>&1 || PY=/usr/bin/python3

printf 'step\texit\tseconds\tstart\tend\tcommand\n' > "$B/steps.tsv"
printf 'phase\tstart\tend\n' > "$B/phases.tsv"
printf 'key\tvalue\n' > "$B/job.tsv"
meta() { printf '%s\t%s\n' "$1" "$2" >> "$B/job.tsv"; }
meta budget_s "$budget"

# step NAME TIMEOUT_S OUTFILE CMD...: as device-check.sh's, with the start
# and end (Unix times) in steps.tsv, so memory samples and the job's lines
# can be matched to the step. Keeps 10 s of the budget for the end.
step() {
  local name=$1 t=$2 file=$3
  shift 3
  local left
  left=$(($(remaining) - 10))
  [ "$t" -gt "$step_cap" ] && t=$step_cap
  if [ "$left" -lt 3 ]; then
    printf '%s\tskipped\t0\t\t\tout of time budget\n' "$name" >> "$B/steps.tsv"
    echo "device-busy: $name skipped (time budget spent)"
    return 125
  fi
  [ "$t" -gt "$left" ] && t=$left
  local t0 t1 rc
  t0=$(now)
  timeout -k 3 "$t" "$@" > "$B/$file" 2> "$B/$file.stderr" < /dev/null
  rc=$?
  t1=$(now)
  [ -s "$B/$file.stderr" ] || rm -f "$B/$file.stderr"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(echo "$t1 - $t0" | awk '{printf "%.3f", $1 - $3}')" \
    "$t0" "$t1" "$*" >> "$B/steps.tsv"
  echo "device-busy: $name -> exit $rc"
  return $rc
}

# gpudoctor: the staged one (with its libraries), else build/.
bin=""
for d in ${GD_BIN_DIR:-} build-device build; do
  if [ -n "$d" ] && [ -x "$d/gpudoctor" ]; then bin=$(cd "$d" && pwd); break; fi
done
[ -n "$bin" ] || { echo "device-busy: no gpudoctor (stage build-device first)"; exit 3; }
gd_lib=""
gd_ok=0
for try in "" "$bin/lib" "$bin/lib:$bin/lib-cxx"; do
  if LD_LIBRARY_PATH="$try${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 10 "$bin/gpudoctor" --version > /dev/null 2>&1; then
    gd_lib=$try
    gd_ok=1
    break
  fi
done
[ "$gd_ok" = 1 ] || { echo "device-busy: $bin/gpudoctor does not run here"; exit 3; }
GD="$bin/gpudoctor"
# The library path goes to gpudoctor only, never to the job or nvidia-smi.
gdenv=(env "LD_LIBRARY_PATH=$gd_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
# shellcheck disable=SC2206
gd_args=(${GD_ARGS:-})

# The job: $GD_JOB_CMD, else busy_job.py under the python that imports torch
# (as device-faults.sh finds it).
job_cmd=()
if [ -n "${GD_JOB_CMD:-}" ]; then
  # shellcheck disable=SC2206
  job_cmd=(${GD_JOB_CMD})
else
  . scripts/device-lib.sh
  find_torch_python
  [ -n "$GD_TORCH_PY" ] && job_cmd=("$GD_TORCH_PY" tests/device/busy_job.py)
fi
echo "device-busy: gpudoctor $GD; job: ${job_cmd[*]:-none}; results in $B"

smi=${GD_NVIDIA_SMI:-nvidia-smi}
have_smi=0
command -v "$smi" > /dev/null && have_smi=1
meta mem_source "$([ "$have_smi" = 1 ] && echo "nvidia-smi --query-gpu=memory.used -i 0 -lms $sample_ms" || echo "none: no nvidia-smi")"

job_pid=""
serve_pid=""
sampler_pid=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  touch "$B/stop" "$B/stop-sampler"
  for p in $serve_pid $job_pid $sampler_pid; do
    kill "$p" 2> /dev/null
  done
}
trap cleanup EXIT

# GPU 0's memory.used and its processes, sampled by nvidia-smi in loop mode
# every $sample_ms ms (busy_report.py sample) from before the job to the end.
if [ "$have_smi" = 1 ]; then
  "$PY" tests/device/busy_report.py sample --dir "$B" --stop "$B/stop-sampler" --ms "$sample_ms" --smi "$smi" &
  sampler_pid=$!
  # One sample of the GPU before the job starts.
  for _ in $(seq 1 100); do
    [ -e "$B/mem.tsv" ] && [ "$(wc -l < "$B/mem.tsv")" -gt 1 ] && break
    sleep 0.1
  done
fi

# ---------------------------------------------------------------- the job
job_ready=0
idle_end=$(now)
idle_start=$(awk -F'\t' 'NR == 2 {print $1}' "$B/mem.tsv" 2> /dev/null)
printf 'idle\t%s\t%s\n' "${idle_start:-$idle_end}" "$idle_end" >> "$B/phases.tsv"
if [ ${#job_cmd[@]} -gt 0 ]; then
  meta cmd "${job_cmd[*]}"
  # The job's CUDA device 0 is nvidia-smi's GPU 0 (-i 0, PCI order).
  timeout -k 5 $((budget + 60)) env CUDA_DEVICE_ORDER=PCI_BUS_ID "${job_cmd[@]}" \
    --stop "$B/stop" --max-s $((budget + 30)) > "$B/job.jsonl" 2> "$B/job.stderr" < /dev/null &
  job_pid=$!
  # Ready: a line with iterations done (the products run), or an error.
  wait_s=$(($(remaining) - 30))
  [ "$wait_s" -gt 90 ] && wait_s=90
  t_end=$(($(date +%s) + wait_s))
  while [ "$(date +%s)" -lt "$t_end" ] && kill -0 "$job_pid" 2> /dev/null; do
    if grep -q '"iters": [1-9]' "$B/job.jsonl" 2> /dev/null; then
      job_ready=1
      break
    fi
    grep -q '"error": "' "$B/job.jsonl" 2> /dev/null && break
    sleep 0.2
  done
  echo "device-busy: job pid $job_pid ready=$job_ready: $(head -1 "$B/job.jsonl" 2> /dev/null | cut -c1-300)"
else
  meta skipped "no job: no python with torch (GD_TORCH_PY) and no GD_JOB_CMD"
fi
meta ready "$job_ready"

# ---------------------------------------------------------------- phase A
if [ "$job_ready" = 1 ]; then
  a0=$(now)
  left=$(($(remaining) - 60))
  s=$alone_s
  [ "$s" -gt "$left" ] && s=$((left > 3 ? left : 3))
  sleep "$s"
  printf 'alone\t%s\t%s\n' "$a0" "$(now)" >> "$B/phases.tsv"
  echo "device-busy: phase A (the job alone) $s s: $(tail -1 "$B/job.jsonl" | cut -c1-200)"
fi

# ---------------------------------------------------------------- phase B
b0=$(now)
for i in 1 2 3; do
  step "check-json-$i" 60 "check-json-$i.json" "${gdenv[@]}" "$GD" check --json "${gd_args[@]}"
  step "snapshot-$i" 60 "snapshot-$i.stdout" "${gdenv[@]}" "$GD" snapshot -o "$B/snapshot-$i.json" "${gd_args[@]}"
done

scontrol=${GD_SCONTROL:-$(command -v scontrol)}
if [ -n "$scontrol" ] && [ -x "$scontrol" ]; then
  # shellcheck disable=SC2086
  step check-slurm 60 check-slurm.txt "${gdenv[@]}" "$GD" check --slurm --slurm-dry-run \
    --scontrol "$scontrol" ${GD_SLURM_ARGS:-} "${gd_args[@]}"
else
  meta slurm_skipped "skipped: no scontrol"
  echo "device-busy: check --slurm skipped: no scontrol"
fi

if [ "$(remaining)" -gt 20 ]; then
  s0=$(now)
  "${gdenv[@]}" "$GD" serve --listen 127.0.0.1:0 --check-interval 1s --interval 1s --no-history \
    --diag-helper none "${gd_args[@]}" > "$B/serve.stdout" 2> "$B/serve.stderr" < /dev/null &
  serve_pid=$!
  step serve-wait 90 serve-wait.txt "$PY" tests/device/busy_report.py wait-serve \
    --stderr "$B/serve.stderr" --runs "$serve_runs" --timeout $(($(remaining) - 15)) --out "$B" --pid "$serve_pid"
  kill -TERM "$serve_pid" 2> /dev/null
  for _ in $(seq 1 100); do
    kill -0 "$serve_pid" 2> /dev/null || break
    [ "$(sed 's/.*) //' "/proc/$serve_pid/stat" 2> /dev/null | cut -d' ' -f1)" = Z ] && break
    sleep 0.1
  done
  kill -KILL "$serve_pid" 2> /dev/null
  wait "$serve_pid"
  serve_rc=$?
  serve_pid=""
  s1=$(now)
  printf 'serve\t%s\t%s\t%s\t%s\t%s\n' "$serve_rc" "$(echo "$s1 - $s0" | awk '{printf "%.3f", $1 - $3}')" \
    "$s0" "$s1" "$GD serve --listen 127.0.0.1:0 --check-interval 1s --interval 1s (stopped by SIGTERM)" >> "$B/steps.tsv"
  echo "device-busy: serve -> exit $serve_rc"
else
  printf 'serve\tskipped\t0\t\t\tout of time budget\n' >> "$B/steps.tsv"
fi
printf 'during\t%s\t%s\n' "$b0" "$(now)" >> "$B/phases.tsv"

# ---------------------------------------------------------------- the end
job_rc=""
if [ -n "$job_pid" ]; then
  touch "$B/stop"
  for _ in $(seq 1 100); do
    kill -0 "$job_pid" 2> /dev/null || break
    sleep 0.1
  done
  kill "$job_pid" 2> /dev/null
  wait "$job_pid"
  job_rc=$?
  job_pid=""
  echo "device-busy: job exit $job_rc: $(tail -1 "$B/job.jsonl" 2> /dev/null | cut -c1-300)"
fi
meta exit "$job_rc"
touch "$B/stop-sampler"
if [ -n "$sampler_pid" ]; then
  wait "$sampler_pid"
  sampler_pid=""
fi
meta elapsed_s "$(($(date +%s) - start))"

"$PY" tests/device/busy_report.py summarize --dir "$B" > "$B/summary.txt"
cat "$B/summary.txt"
echo "device-busy: done in $(($(date +%s) - start)) s"
if [ "$job_ready" = 1 ] && [ "$job_rc" = 0 ]; then
  exit 0
fi
exit 1
