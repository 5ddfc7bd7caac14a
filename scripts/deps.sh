#!/usr/bin/env bash
# Installs what gpudoctor needs to build and test on Debian 12 (run as root,
# or with sudo available). Safe to run again: apt-get skips what is there.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev   # command line, JSON, formatting
  libgtest-dev libgmock-dev libbenchmark-dev   # tests and benchmarks
  libvectorscan-dev libsystemd-dev            # kernel-log prefilter, the journal
  systemd-journal-remote                       # tests: writes real journal files
  clang libclang-rt-14-dev                     # libFuzzer targets
  clang-format python3                         # format check, e2e test driver
  libtomlplusplus-dev                          # the health-threshold config file
  python3-pytest                               # tests of the Python module
  libsqlite3-dev sqlite3                       # the history store; tests read it back
  libcpp-httplib-dev                           # the exporter's HTTP server (with OpenSSL)
  libyaml-cpp-dev libcrypt-dev                 # web config (YAML), bcrypt basic-auth hashes
  prometheus prometheus-node-exporter          # tests: promtool, a real scrape; bench baseline
  slurm-wlm munge                              # tests: a real single-node Slurm
  chromium                                     # tests: the status page in a real browser
  openssl curl                                 # tests: TLS certificates, HTTP client
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
