# Shared by the device scripts (device-faults.sh, device-busy.sh); sourced.

# GD_TORCH_PY: the machine's python that imports torch (README of the first
# record: /opt/torch/.venv), unless the caller set it ("" skips PyTorch).
find_torch_python() {
  [ -n "${GD_TORCH_PY+x}" ] && return 0
  GD_TORCH_PY=""
  local py
  for py in "${PYTHON:-}" /opt/torch/.venv/bin/python python3; do
    if [ -n "$py" ] && timeout 60 "$py" -c 'import torch' > /dev/null 2>&1; then
      GD_TORCH_PY=$py
      return 0
    fi
  done
}
