#!/usr/bin/env bash
# A minimal Debian system to test a release artifact on: made once with
# debootstrap from Debian's registry, kept under build-chroots/ and reused.
# Prints the chroot's path. Needs root (debootstrap, chroot).
#
#   bash tests/packages/chroot.sh bullseye|bookworm|trixie
#
# Each holds what the artifact tests use and nothing of gpudoctor's own
# dependencies: python3 with venv (the wheel), curl (a serve scrape), and
# a normal user "researcher" (uid 1000), so nothing passes because the
# system already had a library.
set -euo pipefail
suite=${1:?usage: chroot.sh SUITE}
case $suite in
  bullseye | bookworm | trixie) ;;
  *)
    echo "chroot.sh: unknown suite '$suite' (bullseye, bookworm or trixie)" >&2
    exit 64
    ;;
esac
cd "$(dirname "$0")/../.."
dir=$PWD/build-chroots/$suite
if [[ ! -f $dir/.ready ]]; then
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  # python3-venv pulls in pip and setuptools as wheels inside ensurepip, so
  # a venv needs no network.
  debootstrap --variant=minbase --include=python3,python3-venv,curl \
    "$suite" "$dir" http://deb.debian.org/debian >"$dir.log" 2>&1 || {
    tail -20 "$dir.log" >&2
    echo "chroot.sh: debootstrap $suite failed (log: $dir.log)" >&2
    exit 1
  }
  chroot "$dir" useradd --create-home --uid 1000 researcher
  touch "$dir/.ready"
fi
echo "$dir"
