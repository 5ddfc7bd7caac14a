#!/usr/bin/env bash
# deploy/ansible's playbook and role run by ansible-playbook against this
# machine as two or three nodes (connection local), each replaying a recorded
# snapshot of tests/diff/nodes/ instead of probing (CI has no GPU):
#
#   pass  node-a gpu-node-01, node-b gpu-node-06: both checks pass and the
#         nodes agree: exit 0
#   fail  node-a gpu-node-01, node-b gpu-node-02 (another driver), node-c
#         gpu-node-04 (fabric manager stopped): node-c fails its check and is
#         left out of the diff; the play fails (exit 2) with the drift report
#         of node-a and node-b, exactly tests/diff/golden/pair.txt
#
# As root (CI), node-a installs the gpudoctor .deb that cpack builds from
# BUILD_DIR through the role (build/packages/ when deb_test.sh left a current
# one there, else a fresh cpack into a temporary directory); the fail play
# finds it installed. It is purged at the end. Otherwise, or when a gpudoctor
# package was installed already, the role runs BUILD_DIR/gpudoctor.
#
#   tests/deploy/ansible_test.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:?usage: ansible_test.sh BUILD_DIR}")
fail() { echo "ansible_test: FAIL: $*" >&2; exit 1; }
command -v ansible-playbook >/dev/null ||
  fail "no ansible-playbook (Debian's ansible-core; scripts/deps.sh --test installs it)"
[ -x "$build/gpudoctor" ] || fail "no $build/gpudoctor"

tmp=$(mktemp -d)
purge=0
cleanup() {
  if [ "$purge" -eq 1 ] && dpkg-query -W gpudoctor >/dev/null 2>&1; then
    apt-get purge -y -q gpudoctor >/dev/null || echo "ansible_test: could not purge gpudoctor" >&2
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The package, or the binary of the build.
deb=""
bin=$build/gpudoctor
if [ "$(id -u)" -ne 0 ]; then
  echo "ansible_test: not root: the role runs $bin (installing the .deb needs root)"
elif dpkg-query -W -f='${Status}' gpudoctor 2>/dev/null | grep -q "install ok installed"; then
  echo "ansible_test: a gpudoctor package is installed already: the role runs $bin and installs nothing"
else
  for f in "$build"/packages/gpudoctor_*.deb; do
    [ ! -e "$f" ] || deb=$f
  done
  if [ -z "$deb" ] || [ "$build/gpudoctor" -nt "$deb" ]; then
    # Outside BUILD_DIR; cpack adds packages/ (CPACK_OUTPUT_FILE_PREFIX).
    (cd "$build" && cpack -G DEB -B "$tmp/cpack" >"$tmp/cpack.log" 2>&1) ||
      { cat "$tmp/cpack.log" >&2; fail "cpack in $build"; }
    deb=$(ls "$tmp"/cpack/packages/gpudoctor_*.deb)
  fi
  bin=/usr/bin/gpudoctor
  purge=1
  echo "ansible_test: the role installs ${deb##*/}"
fi

# Ansible's own files go to the temporary directory, and no ansible.cfg but
# the one shipped is read.
export ANSIBLE_CONFIG=$PWD/deploy/ansible/ansible.cfg ANSIBLE_HOME=$tmp/ansible \
  ANSIBLE_LOCAL_TEMP=$tmp/ansible/tmp ANSIBLE_REMOTE_TEMP=$tmp/ansible/remote-tmp \
  ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
nodes=$PWD/tests/diff/nodes
collected=$tmp/collected

# play NAME "SNAPSHOT..." [ansible-playbook options]: runs the example
# playbook on node-a, node-b (node-c) replaying those snapshots of
# tests/diff/nodes/; sets $rc and $out. With $install set, node-a installs the
# package: only node-a, since all are this machine, whose dpkg takes one
# install at a time (Ansible ends each task on every node before the next, so
# the others find gpudoctor installed).
play() {
  local name=$1 host snap vars="" start=$SECONDS
  local -a snaps names=(node-a node-b node-c)
  read -ra snaps <<<"$2"
  shift 2
  rm -rf "$collected"
  {
    echo "[gpu_nodes]"
    for i in "${!snaps[@]}"; do
      host=${names[$i]}
      snap=${snaps[$i]}
      vars=""
      [ "$i" -ne 0 ] || [ -z "$install" ] || vars=" gpudoctor_deb=$deb"
      echo "$host gpudoctor_snapshot_from=$nodes/$snap.json gpudoctor_work_dir=$tmp/$host$vars"
    done
    # become is off: the test runs as the user it is (root in CI), and CI
    # machines have no sudo.
    echo "[gpu_nodes:vars]"
    echo "ansible_connection=local"
    echo "ansible_python_interpreter=/usr/bin/python3"
    echo "ansible_become=false"
    # With the package, the role's default gpudoctor_bin: /usr/bin/gpudoctor.
    [ -n "$deb" ] || echo "gpudoctor_bin=$bin"
    echo "gpudoctor_collect_dir=$collected"
  } >"$tmp/inventory.ini"
  set +e
  out=$(ansible-playbook -i "$tmp/inventory.ini" deploy/ansible/gpudoctor.yml "$@" 2>&1)
  rc=$?
  set -e
  echo "ansible_test: $name: exit $rc in $((SECONDS - start)) s"
}
expect() {  # expect NAME TEXT: the last play's output holds TEXT
  grep -qF -- "$2" <<<"$out" || { echo "$out" >&2; fail "$1: the output has no: $2"; }
}
task() {  # task NAME TASK HOST STATUS: TASK ended STATUS (ok, changed, ...) on HOST
  awk -v t="TASK [gpudoctor : $2]" 'index($0, t) == 1 {on = 1; next} /^TASK / {on = 0} on' <<<"$out" |
    grep -qE "^$4: \\[$3\\]" || { echo "$out" >&2; fail "$1: $2 was not $4 on $3"; }
}
recap() {  # recap NAME HOST FIELDS: the PLAY RECAP line of HOST has FIELDS (ok=, failed=)
  grep -E "^$2 +:" <<<"$out" | grep -qE "$3" || { echo "$out" >&2; fail "$1: the recap of $2 is not $3"; }
}

# pass: installs the package (as root), both checks pass, no drift.
install=$deb
play pass "gpu-node-01 gpu-node-06"
[ "$rc" -eq 0 ] || { echo "$out" >&2; fail "pass: ansible-playbook exited $rc, not 0"; }
[ "$(grep -cF "msg: 'Verdict: OK" <<<"$out")" -eq 2 ] || { echo "$out" >&2; fail "pass: not two OK verdicts"; }
expect pass "No drift: the 2 nodes agree on all 135 fields compared."
recap pass node-a "failed=0"
recap pass node-b "failed=0"
for n in node-a node-b; do
  [ -f "$collected/$n.json" ] || fail "pass: $n's snapshot was not collected in $collected"
done
diff -u tests/diff/golden/identical.txt "$collected/drift.txt" ||
  fail "pass: drift.txt is not tests/diff/golden/identical.txt"
if [ -n "$deb" ]; then
  dpkg-query -W -f='${Status}' gpudoctor | grep -q "install ok installed" ||
    fail "pass: the gpudoctor package is not installed"
  task pass "Install the package" node-a changed
fi

# fail: node-c's check fails (exit 2), so node-c drops out and is not
# compared: node-a and node-b are, and they disagree (another driver). The
# play fails with the drift report, which is what gpudoctor diff prints for
# those two snapshots alone. The package's version is installed already:
# nothing is copied or installed.
play fail "gpu-node-01 gpu-node-02 gpu-node-04"
[ "$rc" -eq 2 ] || { echo "$out" >&2; fail "fail: ansible-playbook exited $rc, not 2"; }
expect fail "gpudoctor check exited 2:"
expect fail "fabric-manager.not-running"
recap fail node-b "failed=0"
recap fail node-c "failed=1"
[ ! -e "$collected/node-c.json" ] || fail "fail: node-c's snapshot was collected though its check failed"
expect fail "The nodes disagree (gpudoctor diff exited 1):"
expect fail "driver: no majority: 550.54.15 on gpu-node-01; 550.90.07 on gpu-node-02"
expect fail "Drift: 3 of 135 fields differ."
recap fail node-a "failed=1"
diff -u tests/diff/golden/pair.txt "$collected/drift.txt" || fail "fail: drift.txt is not tests/diff/golden/pair.txt"
[ -z "$deb" ] || task fail "Copy the package to the node" node-a skipping

echo "ansible_test: ok (the pass and the fail play; gpudoctor ${deb:+from }${deb:-$bin})"
