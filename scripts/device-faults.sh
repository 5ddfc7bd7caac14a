#!/usr/bin/env bash
# Faults staged on a real GPU machine and recorded: what gpudoctor says under
# each, next to what PyTorch says (tests/device/README.md, "Faults").
#
#   bash scripts/device-faults.sh
#       On the GPU machine, from the repository root, after
#       `bash scripts/device-check.sh --stage` here (the same build-device/
#       carry). Records under ${OUT:-/tmp/device-faults}/faults/ for every case:
#         NAME.snapshot.json  `gpudoctor snapshot` under the fault (a full
#                             snapshot: the record replays with check --from)
#         NAME.json           `gpudoctor check --from NAME.snapshot.json --json`
#         NAME.torch.txt      PyTorch's own output under the same fault
#         NAME.explain.json   `gpudoctor explain NAME.torch.txt --json`
#       and summary.tsv: case, what was staged, PyTorch's exit and answer,
#       gpudoctor's verdict, its first finding and memory.address-space-limit's
#       severity. The cases:
#         base, base2       the healthy machine, twice (first and last)
#         ulimit-4g..32g    `ulimit -v` (soft and hard, as bash sets them) at
#                           4, 8, 16,000,000 KiB, 24 and 32 GiB
#         ulimit-soft-8g    `ulimit -S -v` 8 GiB: the hard limit stays, so
#                           gpudoctor proves the limit with a raised-limit run
#         stub              the toolkit's stubs/libcuda.so as libcuda.so.1
#         cvd-invalid, cvd-empty, cvd-uuid
#                           CUDA_VISIBLE_DEVICES=3 (no such GPU), empty, the
#                           first GPU's UUID (valid: must stay healthy)
#         memheld           another process holds 97 % of GPU 0's memory
#                           (PyTorch allocates it; needs torch)
#
# It never changes device settings: limits and the environment apply to the
# child processes only, and the memory holder is a process that is killed at
# the end. Every step runs under `timeout`, the whole run under a budget
# ($GD_BUDGET_S, 150 s): with device-check.sh's 240 s, one device call of at
# most 6 minutes.
#
# Test hooks (tests/device/test_faults.py runs this against the fake
# libraries): $GD_ARGS is added to every gpudoctor snapshot (--root,
# --nvml-lib, --cuda-lib); $GD_TORCH_PY is the python with torch ("" skips
# PyTorch); $GD_STUB is the stub libcuda to stage.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 3
OUT=${OUT:-/tmp/device-faults}
F="$OUT/faults"
mkdir -p "$F"
exec > >(tee "$OUT/device-faults.log") 2>&1
budget=${GD_BUDGET_S:-150}
start=$(date +%s)
remaining() { echo $((budget - ($(date +%s) - start))); }

# gpudoctor: the staged one (with its libraries), else build/.
bin=""
for d in ${GD_BIN_DIR:-} build-device build; do
  if [ -n "$d" ] && [ -x "$d/gpudoctor" ]; then bin=$(cd "$d" && pwd); break; fi
done
[ -n "$bin" ] || { echo "device-faults: no gpudoctor (stage build-device first)"; exit 3; }
gd_lib=""
for try in "" "$bin/lib" "$bin/lib:$bin/lib-cxx"; do
  if LD_LIBRARY_PATH="$try${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/gpudoctor" --version > /dev/null 2>&1; then
    gd_lib=$try
    break
  fi
done
GD="$bin/gpudoctor"
# shellcheck disable=SC2206
gd_args=(${GD_ARGS:-})

# PyTorch: the machine's python that imports torch, unless $GD_TORCH_PY
# says otherwise.
. scripts/device-lib.sh
find_torch_python
echo "device-faults: gpudoctor $GD; torch python: ${GD_TORCH_PY:-none}; results in $F"

# What PyTorch does at start: is_available (cudaGetDeviceCount), then a real
# operation on the GPU, as a job would.
TORCH_SNIPPET='import torch
print("avail", torch.cuda.is_available())
x = torch.ones(1024, device="cuda")
print("ok", float(x.sum()))'

printf 'case\tstaged\ttorch_exit\ttorch_says\tverdict\tfirst\taddress_space\n' > "$F/summary.tsv"

# in_fault NAME CMD...: CMD under the fault NAME (environment and limits are
# set by the caller through $fault_env and $fault_limit).
run_faulted() {
  local t=$1
  shift
  local pre="${fault_limit:-true}"
  timeout -k 3 "$t" env ${fault_env[@]+"${fault_env[@]}"} bash -c "$pre && exec \"\$@\"" _ "$@"
}

# record NAME WHAT: snapshot, check, PyTorch and explain under the fault.
record() {
  local name=$1 what=$2
  if [ "$(remaining)" -lt 15 ]; then
    printf '%s\t%s\tskipped\tout of time budget\t\t\t\n' "$name" "$what" >> "$F/summary.tsv"
    echo "device-faults: $name skipped (budget)"
    return
  fi
  run_faulted 30 env LD_LIBRARY_PATH="$gd_lib${fault_ld:+:$fault_ld}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$GD" snapshot -o "$F/$name.snapshot.json" "${gd_args[@]}" > "$F/$name.snapshot.stdout" 2>&1
  LD_LIBRARY_PATH="$gd_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 30 \
    "$GD" check --from "$F/$name.snapshot.json" --json > "$F/$name.json" 2> "$F/$name.check.stderr"
  local texit="" tsays="no torch"
  if [ -n "$GD_TORCH_PY" ]; then
    run_faulted 60 env ${fault_ld:+LD_LIBRARY_PATH="$fault_ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"} \
      "$GD_TORCH_PY" -c "$TORCH_SNIPPET" > "$F/$name.torch.txt" 2>&1
    texit=$?
    tsays=$(grep -E '^(avail|ok) |Error [0-9]+:|RuntimeError' "$F/$name.torch.txt" | tr '\n\t' '  ' | cut -c1-160)
    LD_LIBRARY_PATH="$gd_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 30 \
      "$GD" explain "$F/$name.torch.txt" --json > "$F/$name.explain.json" 2>/dev/null
  fi
  local summary
  summary=$(python3 - "$F/$name.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable\t\t"); sys.exit()
first = next((f["id"] for f in r["findings"] if f["severity"] in ("fail", "warn")), "")
asl = next((f["severity"] for f in r["findings"] if f["id"] == "memory.address-space-limit"), "")
print(f'{r["verdict"]}\t{first}\t{asl}')
PY
)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$what" "$texit" "$tsays" "$summary" >> "$F/summary.tsv"
  echo "device-faults: $name -> $summary"
}

fault_env=()
fault_limit=""
fault_ld=""

record base "the healthy machine"

for kb in 4194304 8388608 16000000 25165824 33554432; do
  case $kb in
    16000000) name=ulimit16g ;;
    *) name=ulimit-$((kb / 1048576))g ;;
  esac
  fault_limit="ulimit -v $kb"
  record "$name" "ulimit -v $kb"
done
fault_limit="ulimit -S -v 8388608"
record ulimit-soft-8g "ulimit -S -v 8388608 (hard limit unchanged)"
fault_limit=""

stub=${GD_STUB:-}
if [ -z "$stub" ]; then
  stub=$(ls /usr/local/cuda*/lib64/stubs/libcuda.so /usr/local/cuda*/targets/*/lib/stubs/libcuda.so 2>/dev/null | head -1)
fi
if [ -n "$stub" ] && [ "$stub" != none ]; then
  stubdir=$(mktemp -d)
  ln -s "$stub" "$stubdir/libcuda.so.1"
  ls -l "$stubdir" > "$F/stubls.txt"
  fault_ld=$stubdir
  record stub "the toolkit's $stub as libcuda.so.1 first on LD_LIBRARY_PATH"
  fault_ld=""
else
  printf 'stub\tno toolkit stub found\tskipped\t\t\t\t\n' >> "$F/summary.tsv"
fi

fault_env=(CUDA_VISIBLE_DEVICES=3)
record cvd-invalid "CUDA_VISIBLE_DEVICES=3"
fault_env=(CUDA_VISIBLE_DEVICES=)
record cvd-empty "CUDA_VISIBLE_DEVICES= (empty)"
uuid=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
g = s.get("nvml", {}).get("gpus", [])
print(g[0]["uuid"]["value"] if g else "")' "$F/base.snapshot.json" 2>/dev/null)
if [ -n "$uuid" ]; then
  fault_env=(CUDA_VISIBLE_DEVICES="$uuid")
  record cvd-uuid "CUDA_VISIBLE_DEVICES=$uuid (the first GPU's own UUID)"
fi
fault_env=()

if [ -n "$GD_TORCH_PY" ] && [ "$(remaining)" -gt 30 ]; then
  # 97 % of GPU 0's free memory, held until killed.
  timeout 90 "$GD_TORCH_PY" -c '
import time, torch
free, total = torch.cuda.mem_get_info(0)
x = torch.empty(int(free * 0.97), dtype=torch.uint8, device="cuda:0")
print("holding", x.numel(), "of", total, "bytes", flush=True)
time.sleep(80)' > "$F/hold.txt" 2>&1 &
  holder=$!
  for _ in $(seq 1 40); do grep -q holding "$F/hold.txt" 2>/dev/null && break; sleep 0.5; done
  record memheld "another process holds 97 % of GPU 0's memory ($(cat "$F/hold.txt" | head -1))"
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
fi

record base2 "the healthy machine again, after the other faults"
echo "device-faults: done in $(($(date +%s) - start)) s"
column -t -s $'\t' "$F/summary.tsv" || cat "$F/summary.tsv"
exit 0
