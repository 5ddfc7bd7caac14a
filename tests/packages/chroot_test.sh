#!/usr/bin/env bash
# The release binaries and the bundled wheel on the systems they promise to
# run on (issue 35): minimal Debian 11, 12 and 13 (tests/packages/chroot.sh:
# python3, python3-venv, curl, user researcher, nothing of gpudoctor's own
# dependencies), as root and as the normal user, with no GPU and no driver.
#
#   tests/packages/chroot_test.sh DIST_DIR WHEEL       (as root: chroot, mount)
#
# DIST_DIR holds the release gpudoctor and gpudoctor-serve (scripts/release.sh);
# WHEEL is the bundled wheel (scripts/wheel.sh). In each chroot, as root and
# as researcher: --version; check --from the demo snapshot (exit 2, the
# address-space limit); explain of PyTorch's real out-of-memory traceback;
# logs --from a kernel log with Xids (decoded); serve --from the snapshot on
# a free loopback port, scraped with the chroot's curl; as root, the same
# over TLS with the system's own OpenSSL (1.1 or 3). Then as researcher
# the wheel: pip install --no-index into a fresh venv, its gpudoctor command,
# python -m gpudoctor, preflight() and cuda_available() with no driver, and
# the one-line refusal when the system glibc is below the wheel's.
#
# $GD_CHROOT_SUITES: the suites to run (default "bullseye bookworm trixie").
# $GD_CHROOTS: a directory already holding made chroots (<suite>/.ready), used
# before making one with chroot.sh. Files go into a temporary directory in the
# chroot (the researcher's HOME too), removed on exit; /proc is bind-mounted
# there for the run unless already mounted. Prints each failing step (suite,
# user, step, exit code, output's end) and one summary line per suite.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
usage="usage: chroot_test.sh DIST_DIR WHEEL"
dist=$(realpath "${1:?$usage}")
wheel=$(realpath "${2:?$usage}")
suites=${GD_CHROOT_SUITES:-bullseye bookworm trixie}
for f in "$dist/gpudoctor" "$dist/gpudoctor-serve" "$wheel"; do
  [ -f "$f" ] || { echo "chroot_test: no $f" >&2; exit 64; }
done
[ "$(id -u)" = 0 ] || { echo "chroot_test: needs root (chroot, mount)" >&2; exit 64; }
version=$(sed -n 's/^project(gpudoctor VERSION \([0-9][0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
snapshot=$src/tests/snapshots/ws-4x4090-ulimit.json
# PyTorch 2.x's own words when cudaGetDeviceCount fails under ulimit -v,
# recorded on an H200 VM (tests/device/recorded).
traceback=$src/tests/device/recorded/h200-vm-580.159.04/faults/ulimit16g.torch.txt
# A driver 535 dmesg with Xid 48 (DBE), 63 (row remap) and 94 (contained).
kernlog=$src/tests/logs/cases/dmesg-r535.log

# The suite now running, for the trap.
dir="" tmp="" mounted="" server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  [ -n "$mounted" ] && umount "$mounted"
  [ -n "$tmp" ] && rm -rf "$tmp"
  server="" mounted="" tmp=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0 failed=0
# step SUITE WHO NAME WANT_RC PATTERN COMMAND: runs the shell COMMAND in the
# chroot as WHO (root or researcher); wants exit WANT_RC and the extended
# regex PATTERN in its output (stdout and stderr).
step() {
  local who=$2 name=$3 want=$4 pattern=$5 command=$6 out rc
  if [ "$who" = root ]; then
    out=$(chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
      /bin/sh -c "$command" 2>&1)
  else
    out=$(chroot --userspec=1000:1000 "$dir" /usr/bin/env -i PATH=/usr/bin:/bin \
      HOME="$home" USER=researcher LANG=C.UTF-8 /bin/sh -c "$command" 2>&1)
  fi
  rc=$?
  if [ "$rc" = "$want" ] && grep -Eq -- "$pattern" <<<"$out"; then
    passed=$((passed + 1))
    return 0
  fi
  failed=$((failed + 1))
  echo "chroot_test: FAIL: $1: $who: $name: exit $rc (want $want), '$pattern' $(grep -Eq -- "$pattern" <<<"$out" && echo found || echo 'not found') in:" >&2
  tail -n 8 <<<"$out" | sed 's/^/    /' >&2
  return 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve SUITE WHO: gpudoctor serve --from the snapshot, its /metrics scraped.
serve() {
  local suite=$1 who=$2 port spec=()
  port=$(free_port)
  [ "$who" = root ] || spec=(--userspec=1000:1000)
  # chroot and env exec, so $! is gpudoctor, which execs gpudoctor-serve.
  chroot "${spec[@]}" "$dir" /usr/bin/env -i PATH=/usr/bin:/bin HOME="$home" \
    "$in/bin/gpudoctor" serve --from "$in/data/snapshot.json" --no-history \
    --listen "127.0.0.1:$port" >"$tmp/serve.log" 2>&1 &
  server=$!
  step "$suite" "$who" "serve --from, curl /metrics" 0 '^gpudoctor_[a-z_]+(\{|\s)' \
    "for i in \$(seq 50); do curl -sf http://127.0.0.1:$port/metrics && exit 0; sleep 0.2; done; exit 7" ||
    sed 's/^/    serve: /' "$tmp/serve.log" >&2
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  server=""
}

# serve_tls SUITE: serve --from over TLS (a web config with a certificate
# made here), scraped with the chroot's curl; the libssl the exporter loaded
# must be the system's own: libssl.so.1.1 on Debian 11, libssl.so.3 after.
serve_tls() {
  local suite=$1 port want_ssl=$2
  port=$(free_port)
  chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
    "$in/bin/gpudoctor" serve --from "$in/data/snapshot.json" --no-history \
    --web-config "$in/data/web.yml" --listen "127.0.0.1:$port" >"$tmp/serve-tls.log" 2>&1 &
  server=$!
  step "$suite" root "serve --web-config (TLS), curl https /metrics" 0 '^gpudoctor_[a-z_]+(\{|\s)' \
    "for i in \$(seq 50); do curl -sfk https://127.0.0.1:$port/metrics && exit 0; sleep 0.2; done; exit 7" ||
    sed 's/^/    serve: /' "$tmp/serve-tls.log" >&2
  step "$suite" root "the exporter loaded the system's $want_ssl" 0 "$want_ssl" \
    "grep -o 'libssl[.]so[.][0-9.]*' /proc/$server/maps | sort -u"
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  server=""
}

# The wheel's Python: no driver, no GPU, no /sys in the chroot.
preflight_py=$(cat <<'EOF'
import os, sys
import gpudoctor
lib = gpudoctor.library_path()
assert lib.startswith(os.path.join(sys.prefix, "lib")), f"library {lib} is not the venv's"
try:
    report = gpudoctor.preflight()
    sys.exit(f"preflight() raised nothing: verdict {report['verdict']}")
except gpudoctor.Unhealthy as e:
    assert e.verdict == "fail", e.verdict
    assert "cuda.init-failed" in e.ids, e.ids
    # No driver here (and no /sys): that is the cause, CUDA's failure the symptom.
    assert e.ids[:1] == ["driver.not-loaded"], e.ids
    assert e.causes[0].remedy, e.causes[0]
    print(e)
    print("ids", " ".join(e.ids))
EOF
)
cuda_py=$(cat <<'EOF'
import gpudoctor
status = gpudoctor.cuda_status()
assert status["error"], status
print(gpudoctor.cuda_available(), status["error"])
EOF
)

summary=() bad=0
for suite in $suites; do
  passed=0 failed=0
  if [ -n "${GD_CHROOTS:-}" ] && [ -f "$GD_CHROOTS/$suite/.ready" ]; then
    dir=$GD_CHROOTS/$suite
  else
    dir=$(bash "$src/tests/packages/chroot.sh" "$suite") || {
      summary+=("chroot_test: $suite: FAIL: no chroot (tests/packages/chroot.sh $suite)")
      bad=1
      continue
    }
  fi
  tmp=$(mktemp -d "$dir/tmp/gpudoctor-test.XXXXXX")
  chmod 755 "$tmp"
  in=${tmp#"$dir"}
  home=$in/home
  mkdir -p "$tmp/bin" "$tmp/data" "$tmp/home"
  cp "$dist/gpudoctor" "$dist/gpudoctor-serve" "$tmp/bin/"
  cp "$snapshot" "$tmp/data/snapshot.json"
  cp "$traceback" "$tmp/data/torch.txt"
  cp "$kernlog" "$tmp/data/dmesg.log"
  cp "$wheel" "$tmp/data/"
  printf '%s\n' "$preflight_py" >"$tmp/data/preflight.py"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$tmp/data/key.pem" -out "$tmp/data/cert.pem" 2>/dev/null
  printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' \
    "$in/data/cert.pem" "$in/data/key.pem" >"$tmp/data/web.yml"
  printf '%s\n' "$cuda_py" >"$tmp/data/cuda.py"
  chown 1000:1000 "$tmp/home"
  if ! mountpoint -q "$dir/proc"; then
    mount --bind /proc "$dir/proc" && mounted=$dir/proc
  fi
  glibc=$(chroot "$dir" /usr/bin/getconf GNU_LIBC_VERSION | sed "s/^glibc //")
  python=$(chroot "$dir" /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')

  g=$in/bin/gpudoctor
  for who in root researcher; do
    step "$suite" $who "gpudoctor --version" 0 "^gpudoctor $version\$" "$g --version"
    step "$suite" $who "check --from the demo snapshot" 2 'memory\.address-space-limit' \
      "$g check --from $in/data/snapshot.json"
    step "$suite" $who "explain of PyTorch's out-of-memory traceback" 2 \
      'out of memory' "$g explain < $in/data/torch.txt"
    step "$suite" $who "logs --from a dmesg with Xids" 0 '^Xid 48 .*0000:41:00\.0' \
      "$g logs --from $in/data/dmesg.log"
    serve "$suite" $who
  done
  # curl brings the suite's OpenSSL: 1.1 in Debian 11, 3 in 12 and 13.
  case $suite in
    bullseye) serve_tls "$suite" 'libssl\.so\.1\.1' ;;
    *) serve_tls "$suite" 'libssl\.so\.3' ;;
  esac

  v=$home/v
  whl=$in/data/${wheel##*/}
  if step "$suite" researcher "python3 -m venv, pip install --no-index the wheel" 0 \
    'Successfully installed gpudoctor' \
    "python3 -m venv $v && $v/bin/pip install --no-index --disable-pip-version-check $whl"; then
    step "$suite" researcher "the wheel's gpudoctor check --from" 2 'memory\.address-space-limit' \
      "$v/bin/gpudoctor check --from $in/data/snapshot.json"
    step "$suite" researcher "python -m gpudoctor --version" 0 "^gpudoctor $version\$" \
      "$v/bin/python -m gpudoctor --version"
    step "$suite" researcher "preflight() with no driver" 0 '^ids [a-z]' \
      "$v/bin/python $in/data/preflight.py"
    step "$suite" researcher "cuda_available() with no driver" 0 '^False ' \
      "$v/bin/python $in/data/cuda.py"
    # A glibc below the wheel's tag: one line and exit 3, not the loader's error.
    step "$suite" researcher "the wheel's refusal on a too old glibc" 3 \
      '^gpudoctor: the gpudoctor binary in this wheel needs glibc 99\.0 or newer .*this system has glibc' \
      "p=\$(echo $v/lib/python*/site-packages/gpudoctor) && sed -i 's/^GLIBC_FLOOR = .*/GLIBC_FLOOR = (99, 0)/' \$p/_bundle.py && rm -r \$p/__pycache__ && $v/bin/gpudoctor --version"
  fi
  summary+=("chroot_test: $suite (glibc $glibc, python $python): $passed passed, $failed failed")
  [ "$failed" = 0 ] || bad=1
  cleanup
done
printf '%s\n' "${summary[@]}"
exit "$bad"
