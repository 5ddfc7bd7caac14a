#!/usr/bin/env bash
# gpudoctor against nvidia-smi on a real GPU machine, in one call
# (tests/device/README.md).
#
#   bash scripts/device-check.sh --stage [BUILD_DIR]
#       Here, before the device call: copies BUILD_DIR's (default build/)
#       gpudoctor and libgpudoctor.so.0, stripped, into build-device/ with the
#       shared libraries they need that a GPU machine may lack (fmt,
#       vectorscan, toml++, systemd and theirs; libstdc++ apart, as a
#       fall-back). A few MiB, so it fits the device call's carry limit;
#       the full build/ does not. gpudoctor-diag (the CUDA helper of
#       `gpudoctor diag`, built where nvcc is) comes along when BUILD_DIR has
#       it, but not the cuBLAS and NCCL it links (libcublas.so.13,
#       libcublasLt.so.13, libnccl.so.2: about 800 MB): STAGED names them,
#       and bench/diag_gpu.sh finds them on the GPU machine (a CUDA toolkit,
#       or PyTorch's nvidia-cublas / nvidia-nccl wheels). $GD_STAGE_DIR
#       (tests) stages elsewhere than build-device/.
#
#       The active diagnostics (`gpudoctor diag --level 2` against PyTorch,
#       planted faults, start-up timings) are a separate call of about six
#       minutes, too long for this script's budget: bash bench/diag_gpu.sh
#       (bench/README.md), with the same carry.
#
#   bash scripts/device-check.sh
#       On the GPU machine, from the repository root. Uses $GD_BIN_DIR, else
#       build-device/, else build/ (building build/ with cmake + ninja only
#       when neither has a binary: the machine may have no network and no
#       build dependencies, so carry build-device). Records nvidia-smi's and
#       gpudoctor's views of the machine under ${OUT:-/tmp/device-check},
#       runs tests/device/python_check.py under the machine's python3, then
#       tests/device/compare.py over all of it.
#
# Every step runs under `timeout` and the whole run under a budget
# ($GD_BUDGET_S, 240 s), so it never hangs. A failing step is recorded
# (steps.tsv: name, exit status, seconds) and the run goes on.
#
# Exit status: 0 everything agrees; 1 compare.py found a DIFF; 2 compare.py
# had nothing usable to compare; 3 no runnable gpudoctor; 4 no nvidia-smi or
# no output from nvidia-smi -q -x.
#
# Test hooks (tests/device/test_compare.py runs this script against the fake
# libraries and a stand-in nvidia-smi): $GD_ARGS is added to every gpudoctor
# snapshot/check/topo command (--root, --nvml-lib, --cuda-lib), $GD_LOG_ARGS
# to `gpudoctor logs`, $GD_PY_ARGS to python_check.py; $GD_STEP_TIMEOUT_S
# caps every step.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 3

# ---------------------------------------------------------------- --stage
if [ "${1:-}" = "--stage" ]; then
  src=${2:-build}
  dst=${GD_STAGE_DIR:-build-device}
  if [ ! -x "$src/gpudoctor" ] || [ ! -e "$src/libgpudoctor.so.0" ]; then
    echo "device-check: $src has no gpudoctor / libgpudoctor.so.0; build it first" >&2
    exit 3
  fi
  rm -rf "$dst"
  mkdir -p "$dst/lib" "$dst/lib-cxx"
  strip -o "$dst/gpudoctor" "$src/gpudoctor"
  strip -o "$dst/gpudoctor-serve" "$src/gpudoctor-serve"
  strip -o "$dst/libgpudoctor.so.0" "$(readlink -f "$src/libgpudoctor.so.0")"
  diag_ldd=""
  if [ -x "$src/gpudoctor-diag" ]; then
    strip -o "$dst/gpudoctor-diag" "$src/gpudoctor-diag"
    diag_ldd=$dst/gpudoctor-diag
  fi
  # Everything these need except the C library itself, which any Linux
  # machine has (the binaries need glibc >= the newest GLIBC_ version below),
  # and cuBLAS / NCCL, far over the carry limit (the GPU machine's own are used).
  : > "$dst/.not-staged"
  { ldd "$dst/gpudoctor"; ldd "$dst/gpudoctor-serve"; ldd "$dst/libgpudoctor.so.0"; [ -z "$diag_ldd" ] || ldd "$diag_ldd"; } | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
    sort -u | while read -r name path; do
      case "$name" in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
        libcublas.so.*|libcublasLt.so.*|libnccl.so.*)
          echo "$name ($(($(stat -L -c %s "$path") / 1048576)) MiB)" >> "$dst/.not-staged" ;;
        libstdc++.so.*|libgcc_s.so.*) cp -L "$path" "$dst/lib-cxx/$name" ;;
        *) cp -L "$path" "$dst/lib/$name" ;;
      esac
    done
  {
    echo "staged from: $src ($(date -u +%FT%TZ))"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "needs: $(objdump -T "$dst/gpudoctor" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1) $(objdump -T "$dst/gpudoctor" 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
    echo "lib/: $(ls "$dst/lib" | tr '\n' ' ')"
    echo "lib-cxx/: $(ls "$dst/lib-cxx" | tr '\n' ' ')"
    if [ -n "$diag_ldd" ]; then
      echo "gpudoctor-diag: staged; needs from the GPU machine: $(tr '\n' ' ' < "$dst/.not-staged")(too big to carry; bench/diag_gpu.sh looks for them there)"
    else
      echo "gpudoctor-diag: not in $src (built only where nvcc is): gpudoctor diag cannot run there"
    fi
  } > "$dst/STAGED"
  rm -f "$dst/.not-staged"
  cat "$dst/STAGED"
  echo "size: $(du -sh "$dst" | cut -f1) -- run on the device with carry [\"$dst\"]: bash scripts/device-check.sh"
  exit 0
fi

# ---------------------------------------------------------------- run
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT"
exec > >(tee "$OUT/device-check.log") 2>&1
budget=${GD_BUDGET_S:-240}
step_cap=${GD_STEP_TIMEOUT_S:-120}
start=$(date +%s)
printf 'step\texit\tseconds\tcommand\n' > "$OUT/steps.tsv"

remaining() { echo $((budget - ($(date +%s) - start))); }

# step NAME TIMEOUT_S OUTFILE CMD...: CMD's stdout to $OUT/OUTFILE, stderr
# to $OUT/OUTFILE.stderr (removed when empty); exit status in steps.tsv
# (124: timed out). Returns CMD's exit status.
step() {
  local name=$1 t=$2 file=$3
  shift 3
  local left
  left=$(remaining)
  [ "$t" -gt "$step_cap" ] && t=$step_cap
  if [ "$left" -lt 5 ]; then
    printf '%s\tskipped\t0\tout of time budget\n' "$name" >> "$OUT/steps.tsv"
    echo "device-check: $name skipped (time budget spent)"
    return 125
  fi
  [ "$t" -gt $((left - 2)) ] && t=$((left - 2))
  local t0 rc
  t0=$(date +%s%N)
  timeout -k 3 "$t" "$@" > "$OUT/$file" 2> "$OUT/$file.stderr" < /dev/null
  rc=$?
  [ -s "$OUT/$file.stderr" ] || rm -f "$OUT/$file.stderr"
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%s\t%s\t%d.%03d\t%s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "$*" >> "$OUT/steps.tsv"
  echo "device-check: $name -> exit $rc"
  return $rc
}

PY=${PYTHON:-python3}
command -v "$PY" > /dev/null 2>&1 || PY=/usr/bin/python3

echo "device-check: results in $OUT"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "uname: $(uname -a)"
  grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release 2>/dev/null
  echo "id: $(id)"
  echo "nproc: $(nproc 2>/dev/null)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "python3: $(command -v "$PY") $("$PY" --version 2>&1)"
  echo "nvidia-smi: $(command -v nvidia-smi || echo missing)"
  echo "driver: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo 'no /proc/driver/nvidia/version')"
  echo "staged: $(tr '\n' ';' < build-device/STAGED 2>/dev/null || echo 'no build-device/STAGED')"
  echo "env:"
  env | grep -E '^(CUDA_|NVIDIA_|LD_LIBRARY_PATH|PYTORCH_|GPUDOCTOR_)' | sort | sed 's/^/  /'
  echo "devnodes:"
  ls -la /dev/nvidia* 2>&1 | sed 's/^/  /'
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# ---------------------------------------------------------------- gpudoctor
bin=""
for d in ${GD_BIN_DIR:-} build-device build; do
  if [ -n "$d" ] && [ -x "$d/gpudoctor" ]; then bin=$(cd "$d" && pwd); break; fi
done
if [ -z "$bin" ] && command -v cmake > /dev/null && command -v ninja > /dev/null; then
  echo "device-check: no gpudoctor binary; trying to build build/ (needs scripts/deps.sh's packages)"
  step build-configure 120 build-configure.txt cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGD_TESTS=OFF
  step build 300 build.txt ninja -C build gpudoctor gpudoctor_shared
  [ -x build/gpudoctor ] && bin=$(cd build && pwd)
fi
gd_ok=0
if [ -n "$bin" ]; then
  # Find the smallest library path that runs it: none, the staged libraries
  # the machine lacks, all staged libraries, those plus the staged libstdc++.
  missing_dir=$(mktemp -d)
  if [ -d "$bin/lib" ]; then
    for f in "$bin"/lib/*; do
      [ -e "$f" ] || continue
      grep -q " $(basename "$f") " <<<"$(ldconfig -p 2>/dev/null)" || ln -s "$f" "$missing_dir/"
    done
  fi
  for try in "" "$missing_dir" "$bin/lib" "$bin/lib:$bin/lib-cxx"; do
    if LD_LIBRARY_PATH="$try${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 10 "$bin/gpudoctor" --version > "$OUT/gpudoctor-version.txt" 2>&1; then
      gd_ok=1
      gd_ldpath=$try
      break
    fi
  done
  echo "gpudoctor: $bin/gpudoctor; LD_LIBRARY_PATH added: '${gd_ldpath:-}'" >> "$OUT/machine.txt"
  ldd "$bin/gpudoctor" > "$OUT/gpudoctor-ldd.txt" 2>&1
fi
# The library path goes to gpudoctor and the Python checks only, never to
# nvidia-smi: the staged libraries must not stand in for the machine's own.
gdenv=()
if [ "$gd_ok" = 1 ]; then
  [ -n "$gd_ldpath" ] && gdenv=(env "LD_LIBRARY_PATH=$gd_ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  GD="$bin/gpudoctor"
  echo "device-check: gpudoctor $(cat "$OUT/gpudoctor-version.txt")"
else
  GD=""
  echo "device-check: no runnable gpudoctor (see gpudoctor-version.txt, gpudoctor-ldd.txt);" \
    "stage one here with: bash scripts/device-check.sh --stage, and carry build-device"
fi
# shellcheck disable=SC2206
gd_args=(${GD_ARGS:-})

# ---------------------------------------------------------------- nvidia-smi, ours in between
have_smi=0
command -v nvidia-smi > /dev/null && have_smi=1
smi() { [ "$have_smi" = 1 ] && step "$@"; }

smi smi-version 20 smi-version.txt nvidia-smi --version
smi smi-L 30 smi-L.txt nvidia-smi -L
smi smi-q-x-before 60 smi-q-x.before.xml nvidia-smi -q -x
if [ -n "$GD" ]; then
  step snapshot 90 snapshot.stdout "${gdenv[@]}" "$GD" snapshot -o "$OUT/snapshot.json" "${gd_args[@]}"
fi
smi smi-q-x-after 60 smi-q-x.after.xml nvidia-smi -q -x
smi smi-q 60 smi-q.txt nvidia-smi -q
smi smi-plain 30 smi.txt nvidia-smi

if [ "$have_smi" = 1 ]; then
  fields=$("$PY" tests/device/compare.py --csv-fields)
  if ! step smi-query 60 smi-query.csv nvidia-smi --query-gpu="$fields" --format=csv,nounits; then
    # An older nvidia-smi rejects the whole query for one unknown field:
    # the older reason name first, then keep the fields it accepts.
    fields=${fields/clocks_event_reasons.active/clocks_throttle_reasons.active}
    if ! step smi-query-throttle 60 smi-query.csv nvidia-smi --query-gpu="$fields" --format=csv,nounits; then
      ok_fields=""
      for f in ${fields//,/ }; do
        [ "$(remaining)" -gt 60 ] || break
        timeout 10 nvidia-smi --query-gpu="$f" --format=csv,noheader -i 0 > /dev/null 2>&1 &&
          ok_fields="${ok_fields:+$ok_fields,}$f"
      done
      echo "fields accepted: $ok_fields" > "$OUT/smi-query-fields.txt"
      [ -n "$ok_fields" ] && step smi-query-accepted 60 smi-query.csv nvidia-smi --query-gpu="$ok_fields" --format=csv,nounits
    fi
  fi
  step smi-remapped-rows 60 smi-remapped-rows.csv nvidia-smi \
    --query-remapped-rows="$("$PY" tests/device/compare.py --remap-csv-fields)" --format=csv,nounits
  step smi-topo-m 60 smi-topo-m.txt nvidia-smi topo -m
  step smi-nvlink-s 60 smi-nvlink-s.txt nvidia-smi nvlink -s
  step smi-nvlink-R 60 smi-nvlink-R.txt nvidia-smi nvlink -R
fi

if [ -n "$GD" ]; then
  step check-json 90 check.json "${gdenv[@]}" "$GD" check --json "${gd_args[@]}"
  step check-text 90 check.txt "${gdenv[@]}" "$GD" check -v "${gd_args[@]}"
  step topo-json 90 topo.json "${gdenv[@]}" "$GD" topo --json "${gd_args[@]}"
  step topo-text 90 topo.txt "${gdenv[@]}" "$GD" topo "${gd_args[@]}"
  # shellcheck disable=SC2086
  step logs-json 60 logs.json "${gdenv[@]}" "$GD" logs --json ${GD_LOG_ARGS:-}
  # The exporter on real NVML: 200 scrapes, CPU per scrape and memory; the
  # scrapes are kept (scrapes/) for `promtool check metrics` back home.
  if [ -z "${GD_ARGS:-}" ] && [ -x "$bin/gpudoctor-serve" ]; then
    step serve-scrape 120 serve-scrape.txt "${gdenv[@]}" env GD_BIN_DIR="$bin" \
      "$PY" bench/serve_scrape.py --real 200 --save "$OUT/scrapes"
  fi
fi

# ---------------------------------------------------------------- kernel log
if [ "$(id -u)" = 0 ]; then
  step dmesg 30 dmesg.txt dmesg
elif command -v sudo > /dev/null && step dmesg-sudo 30 dmesg.txt sudo -n dmesg; then
  :
else
  step dmesg 30 dmesg.txt dmesg
fi
if [ ! -s "$OUT/dmesg.txt" ]; then
  echo "no kernel log: $(head -3 "$OUT/dmesg.txt.stderr" 2>/dev/null | tr '\n' ' ')" \
    "(kernel.dmesg_restrict=$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null || echo ?), uid $(id -u))" > "$OUT/dmesg.why"
  cat "$OUT/dmesg.why"
else
  grep -iE 'nvrm|nvidia|xid|aer|nvswitch|fabric' "$OUT/dmesg.txt" > "$OUT/dmesg-nvidia.txt"
fi

# ---------------------------------------------------------------- Python
py_args=()
if [ -n "$GD" ]; then
  pys=("$PY")
  [ -x /usr/bin/python3 ] && [ "$(readlink -f "$(command -v "$PY")")" != "$(readlink -f /usr/bin/python3)" ] && pys+=(/usr/bin/python3)
  n=0
  for p in "${pys[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    step "python-$n" 180 "python-$n.txt" "${gdenv[@]}" env PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" \
      GPUDOCTOR_LIB="$bin/libgpudoctor.so.0" GPUDOCTOR_EXE="$GD" PYTHONDONTWRITEBYTECODE=1 \
      "$p" tests/device/python_check.py --out "$OUT/python-$n.json" ${GD_PY_ARGS:-}
    [ -s "$OUT/python-$n.json" ] && py_args+=(--python "$OUT/python-$n.json")
  done
fi

# ---------------------------------------------------------------- compare
cmp=(--snapshot "$OUT/snapshot.json")
for f in smi-q-x.before.xml smi-q-x.after.xml; do
  [ -s "$OUT/$f" ] && cmp+=(--smi-xml "$OUT/$f")
done
[ -s "$OUT/smi-query.csv" ] && cmp+=(--smi-csv "$OUT/smi-query.csv")
[ -s "$OUT/smi-remapped-rows.csv" ] && cmp+=(--smi-remap-csv "$OUT/smi-remapped-rows.csv")
[ -s "$OUT/smi-nvlink-s.txt" ] && cmp+=(--smi-nvlink "$OUT/smi-nvlink-s.txt")
[ -s "$OUT/smi-nvlink-R.txt" ] && cmp+=(--smi-nvlink-remote "$OUT/smi-nvlink-R.txt")
[ -s "$OUT/topo.json" ] && [ -s "$OUT/smi-topo-m.txt" ] && cmp+=(--topo-json "$OUT/topo.json" --smi-topo "$OUT/smi-topo-m.txt")
cmp+=("${py_args[@]}")

rc=0
if [ -z "$GD" ]; then
  rc=3
elif [ "$have_smi" != 1 ]; then
  echo "device-check: no nvidia-smi on this machine: nothing to compare against"
  rc=4
elif [ ! -s "$OUT/smi-q-x.before.xml" ] && [ ! -s "$OUT/smi-q-x.after.xml" ]; then
  echo "device-check: nvidia-smi -q -x gave no output (steps.tsv): nothing to compare against"
  rc=4
fi
if [ -s "$OUT/snapshot.json" ]; then
  "$PY" tests/device/compare.py "${cmp[@]}" --report "$OUT/compare.txt" --summary "$OUT/compare.json" > /dev/null
  crc=$?
  echo "device-check: compare.py -> exit $crc ($(tail -1 "$OUT/compare.txt" 2>/dev/null))"
  awk '/^== /{h=$2} /^(DIFF|skip) /{print h ": " $0}' "$OUT/compare.txt" 2>/dev/null | head -60
  [ "$rc" = 0 ] && rc=$crc
fi
echo "device-check: done in $(($(date +%s) - start)) s, exit $rc; copy $OUT to tests/device/recorded/<machine>/"
exit $rc
