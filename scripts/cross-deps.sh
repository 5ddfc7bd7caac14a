#!/usr/bin/env bash
# What the aarch64 release build (cmake/toolchain-aarch64.cmake) compiles
# and links against, besides Debian 11's glibc (scripts/sysroot.sh): Debian
# 12's arm64 packages of the third-party libraries, unpacked into
# build-sysroot/deps-aarch64 rather than installed, so nothing of the build
# machine's own (amd64) packages changes; and the cross compiler.
#
#   bash scripts/cross-deps.sh       (as root; prints the folder)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/build-sysroot/deps-aarch64
if [[ -f $root/.ready ]]; then
  echo "$root"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -q >/dev/null
fi
command -v aarch64-linux-gnu-g++ >/dev/null ||
  $sudo apt-get install -y -q --no-install-recommends g++-aarch64-linux-gnu >/dev/null
# The -dev packages with their static archives, headers and CMake or
# pkg-config files; the runtime packages only because those files name the
# shared libraries, which the release build does not link. CLI11 and
# nlohmann-json are headers of any architecture.
packages=(
  libvectorscan-dev:arm64 libvectorscan5:arm64
  libsqlite3-dev:arm64 libsqlite3-0:arm64
  libyaml-cpp-dev:arm64 libyaml-cpp0.7:arm64
  libcrypt-dev:arm64 libcrypt1:arm64
  libfmt-dev:arm64 libfmt9:arm64
  libtomlplusplus-dev:arm64 libtomlplusplus3:arm64
  libsystemd-dev:arm64 libsystemd0:arm64
  libssl-dev:arm64 libssl3:arm64
  libcli11-dev nlohmann-json3-dev
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt downloads as its own user, _apt
(cd "$work" && apt-get download -q "${packages[@]}" >/dev/null)
rm -rf "$root"
mkdir -p "$root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$root"; done
# Absolute links (libfoo.so -> /usr/lib/...) point inside the folder.
find "$root" -type l -lname '/*' | while read -r link; do
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$(readlink "$link")")" "$link"
done
touch "$root/.ready"
echo "$root"
