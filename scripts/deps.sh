#!/usr/bin/env bash
# Installs what gpudoctor needs on Debian 12 (run as root, or with sudo
# available). Safe to run again: apt-get skips what is there.
#
#   deps.sh          building and running only (scripts/quickstart.sh)
#   deps.sh --test   also the test suite's tools (scripts/test.sh, CI)
#   deps.sh --fuzz   also clang and libFuzzer (scripts/fuzz.sh alone)
#
# The test tools include daemons (Slurm, munge, Prometheus); the tests start
# their own private instances. Debian would start them as system services on
# install, so they are installed with services forbidden to start
# (policy-rc.d) and stopped if one runs anyway: a machine being diagnosed
# gets no new service from this script.
set -euo pipefail
build=(
  cmake ninja-build g++ pkg-config python3
  libcli11-dev nlohmann-json3-dev libfmt-dev   # command line, JSON, formatting
  libvectorscan-dev libsystemd-dev            # kernel-log prefilter, the journal (dlopen)
  libtomlplusplus-dev                          # the health-threshold config file
  libsqlite3-dev                               # the history store
  libssl-dev                                   # the exporter's TLS (headers; dlopen of libssl3)
  libyaml-cpp-dev libcrypt-dev                 # web config (YAML), bcrypt basic-auth hashes
)
test=(
  libgtest-dev libgmock-dev libbenchmark-dev   # unit tests and benchmarks
  systemd-journal-remote                       # writes real journal files
  clang-format clang-tidy python3-pytest       # format and tidy checks, Python module tests
  clang libclang-rt-14-dev                     # the sanitizer build, which holds the fuzz targets
  sqlite3                                      # reads the history back
  prometheus prometheus-node-exporter          # promtool, a real scrape; bench baseline
  slurm-wlm munge                              # a real single-node Slurm
  chromium                                     # the status page in a real browser
  openssl curl                                 # TLS certificates, HTTP client
  groff-base man-db zsh fish                   # the man pages and completions, tried
  dpkg-dev file                                # cpack's Debian packages (dpkg-shlibdeps)
  rpm                                          # cpack's RPM packages (rpmbuild), read back and installed (rpm)
  debootstrap                                  # Debian 11, 12, 13 chroots the release artifacts are tried in
  qemu-user-static                             # the aarch64 release binaries, run here (scripts/release.sh)
  python3-venv python3-pip python3-setuptools python3-wheel   # the Python wheel, built and installed offline
  podman runc umoci skopeo                     # the container image: build, inspect, run (deploy/container)
  ansible-core python3-apt                     # the Ansible role, played against localhost (apt module)
)
fuzz=(clang libclang-rt-14-dev)                # libFuzzer (and the sanitizers) for clang
daemons=(slurmctld slurmd munge prometheus prometheus-node-exporter)

packages=("${build[@]}")
case "${1:-}" in
  "") ;;
  --test) packages+=("${test[@]}") ;;
  --fuzz) packages+=("${fuzz[@]}") ;;
  *) echo "usage: deps.sh [--test|--fuzz]" >&2; exit 64 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

# invoke-rc.d asks policy-rc.d before starting a service; 101 = "not allowed".
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  own_policy=1
fi
cleanup() { [ "$own_policy" -eq 0 ] || $sudo rm -f "$policy"; }
trap cleanup EXIT

$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

# A service that started anyway (a systemd that ignores policy-rc.d): stop it.
for d in "${daemons[@]}"; do
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$d" 2>/dev/null; then
    $sudo systemctl stop "$d" || true
    $sudo systemctl disable "$d" 2>/dev/null || true
    echo "deps: stopped the $d service the package started"
  fi
done
