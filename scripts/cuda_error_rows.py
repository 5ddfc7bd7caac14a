#!/usr/bin/env python3
"""Prints the src/catalog/cuda_errors.cc rows the installed CUDA toolkit has
and the table lacks: every CUresult (cuda.h) and cudaError_t
(driver_types.h) by value, with libcudart's own cudaGetErrorString text
(the runtime answers without a GPU or driver). Rows pair the two enums by
value, as the table does (runtime values equal driver values since CUDA
10.1 where both exist).

    cuda_error_rows.py [CUDA_HOME]     (default /usr/local/cuda)

Paste the output into kCudaErrors in numeric order; tests/abi/cuda_abi_test.cc
then checks every row and that none is missing.
"""
import ctypes
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
home = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda"


def enum_values(path, enum, prefix):
    text = open(path).read()
    body = re.search(r"enum\s+(?:__device_builtin__\s+)?" + enum + r"\s*\{(.*?)\}", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out = {}
    for name, value in re.findall(r"\b(" + prefix + r"\w+)\s*=\s*(\d+)", body):
        out.setdefault(int(value), name)
    return out


driver = enum_values(os.path.join(home, "include", "cuda.h"), "cudaError_enum", "CUDA_")
runtime = enum_values(os.path.join(home, "include", "driver_types.h"), "cudaError", "cuda")
cudart = ctypes.CDLL(os.path.join(home, "lib64", "libcudart.so"))
cudart.cudaGetErrorString.restype = ctypes.c_char_p
have = {int(m) for m in re.findall(r"^\s*\{(\d+),", open(
    os.path.join(HERE, "..", "src", "catalog", "cuda_errors.cc")).read(), re.M)}


def c(s):
    return "nullptr" if s is None else '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


for code in sorted(set(driver) | set(runtime)):
    if code in have:
        continue
    rt = runtime.get(code)
    text = cudart.cudaGetErrorString(code).decode() if rt else None
    print("  {%d, %s, %s, %s, nullptr}," % (code, c(driver.get(code)), c(rt), c(text)))
