#!/usr/bin/env bash
# The Debian packages end to end: cpack builds them from BUILD_DIR, apt-get
# installs them (as root: CI), then the installed tool is used as a user
# would (the demo report, the man pages, bash completion, the C library
# through pkg-config, the Python module), and they are removed again.
#
#   tests/packages/deb_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: deb_test.sh BUILD_DIR}")
if [ "$(id -u)" -ne 0 ]; then
  echo "deb_test: skipped (installing packages needs root)"
  exit 0
fi
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }

rm -rf "$build/packages"
(cd "$build" && cpack >/dev/null)
mapfile -t debs < <(ls "$build"/packages/*.deb)
echo "deb_test: built ${debs[*]##*/}"
for want in gpudoctor_ libgpudoctor_; do
  printf '%s\n' "${debs[@]##*/}" | grep -q "^$want" || fail "no ${want%_} package"
done
for deb in "${debs[@]}"; do
  grep -q "Depends:.*nvidia" <<<"$(dpkg-deb --info "$deb")" && fail "$deb depends on the NVIDIA driver"
done
# OpenSSL (the exporter's TLS) and libsystemd (the journal) are dlopened when
# asked: recommended, so a plain install has them, never required.
gd_deb=$(printf '%s\n' "${debs[@]}" | grep -E '/gpudoctor_')
info=$(dpkg-deb --info "$gd_deb")
grep -q "^ Recommends:.*libssl3" <<<"$info" || fail "gpudoctor does not recommend libssl3"
grep -q "^ Recommends:.*libsystemd0" <<<"$info" || fail "gpudoctor does not recommend libsystemd0"
grep -qE "^ Depends:.*(libssl|libcrypto|libsystemd)" <<<"$info" && fail "gpudoctor depends on OpenSSL or libsystemd"

installed=()
cleanup() { [ ${#installed[@]} -eq 0 ] || apt-get purge -y -q "${installed[@]}" >/dev/null; }
trap cleanup EXIT
main=$(printf '%s\n' "${debs[@]}" | grep -E '/(gpudoctor|libgpudoctor)_')
mapfile -t main <<<"$main"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${main[@]}" >/dev/null
installed=(gpudoctor libgpudoctor)

[ "$(command -v gpudoctor)" = /usr/bin/gpudoctor ] || fail "gpudoctor is not /usr/bin/gpudoctor"
grep -q "^gpudoctor " <<<"$(gpudoctor --version)" || fail "gpudoctor --version"
demo=/usr/share/doc/gpudoctor/examples/ws-4x4090-ulimit.json
set +e
out=$(gpudoctor check --from "$demo" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check --from $demo exited $rc: $out"
grep -q "FAIL" <<<"$out" || fail "the demo report has no FAIL: $out"
grep -q -- "--listen" <<<"$(gpudoctor serve --help)" || fail "gpudoctor serve (gpudoctor-serve) --help"
man -w gpudoctor-check >/dev/null || fail "no man page gpudoctor-check(1)"
grep -q -- "--history" <<<"$(MANWIDTH=80 man gpudoctor-history 2>/dev/null)" || fail "man gpudoctor-history"
bash -c 'source /usr/share/bash-completion/completions/gpudoctor; COMP_WORDS=(gpudoctor top);
  COMP_CWORD=1; _gpudoctor; [ "${COMPREPLY[*]}" = topo ]' || fail "bash completion"
[ -f /usr/share/zsh/vendor-completions/_gpudoctor ] || fail "zsh completion"
[ -f /usr/share/fish/vendor_completions.d/gpudoctor.fish ] || fail "fish completion"
pkg-config --exists gpudoctor || fail "pkg-config gpudoctor"
/usr/bin/python3 -c "import gpudoctor" || fail "python3 -c 'import gpudoctor'"
echo "deb_test: ok (installed, used, removed: ${installed[*]})"
