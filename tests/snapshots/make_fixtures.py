#!/usr/bin/env python3
"""Derives the recorded-snapshot fixtures from ws-4x4090.json (a snapshot of
the healthy 4 x RTX 4090 workstation, recorded with `gpudoctor snapshot` on
tests/roots/ws-4x4090 and the fakes). Each fixture stages one condition that
a root tree and the fakes cannot stage on a CI machine. Run it after
re-recording ws-4x4090.json; the e2e scenarios in tests/scenarios use them.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = json.load(open(os.path.join(HERE, "ws-4x4090.json")))


def cuda_fails(s, rc, lib=None):
    for run in s["cuda"]["runs"]:
        run["init_rc"] = rc
        run["device_count_rc"] = -1
        run["device_count"] = 0
        run["devices"] = []
        run["cudart_rc"] = rc
        run["cudart_device_count"] = 0
        if lib:
            run["library_loaded"] = lib


def module_load_failed(s):
    # The probe routine failed for one GPU: unbound, absent from
    # /proc/driver/nvidia/gpus, unknown to NVML and CUDA.
    lost = "0000:61:00.0"
    for d in s["pci"]:
        if d["bdf"] == lost:
            d.update(driver="", proc_model="", proc_uuid="", proc_minor=None)
    s["nvml"]["gpus"] = [g for g in s["nvml"]["gpus"] if g["pci_bus_id"]["value"] != lost]
    s["nvml"]["device_count"]["value"] = 3
    for run in s["cuda"]["runs"]:
        run["devices"] = [d for d in run["devices"] if d["pci_bus_id"] != lost]
        for i, d in enumerate(run["devices"]):
            d["ordinal"] = i
        run["device_count"] = run["cudart_device_count"] = 3


def gpu_unsupported(s):
    # A Tesla K40m (Kepler, last supported by R470) beside the 4090s on R550.
    for d in s["pci"]:
        if d["bdf"] == "0000:61:00.0":
            d.update(device_id=0x1023, class_code=0x030200, driver="", proc_model="",
                     proc_uuid="", proc_minor=None)
    s["pci"] = [d for d in s["pci"] if d["bdf"] != "0000:61:00.1"]
    module_load_failed_nvml_cuda_only(s, "0000:61:00.0")


def module_load_failed_nvml_cuda_only(s, lost):
    s["nvml"]["gpus"] = [g for g in s["nvml"]["gpus"] if g["pci_bus_id"]["value"] != lost]
    s["nvml"]["device_count"]["value"] = len(s["nvml"]["gpus"])
    for run in s["cuda"]["runs"]:
        run["devices"] = [d for d in run["devices"] if d["pci_bus_id"] != lost]
        for i, d in enumerate(run["devices"]):
            d["ordinal"] = i
        run["device_count"] = run["cudart_device_count"] = len(run["devices"])


def compat_mismatch(s):
    # A cuda-compat 12.8 libcuda (R570) on the R550 kernel module: 803, on
    # L40S boards (data-center GPUs, where forward compatibility is supported).
    for d in s["pci"]:
        if d["kind"] == "gpu":
            d["device_id"] = 0x26B9
    for g in s["nvml"]["gpus"]:
        g["pci_device_id"]["value"] = 0x26B910DE
        g["name"]["value"] = "NVIDIA L40S"
    cuda_fails(s, 803, "/usr/local/cuda-12.8/compat/libcuda.so.570.124.06")


def uvm_hmm(s):
    s["driver"]["uvm_disable_hmm"] = "N"
    cuda_fails(s, 999)


def after_suspend(s):
    s["driver"]["uvm_disable_hmm"] = "Y"
    s["driver"]["seconds_since_resume"] = 5400.0
    cuda_fails(s, 999)


def container_driver_mismatch(s):
    s["container"].update(in_container=True, runtime="docker",
                          evidence="/.dockerenv exists")
    s["container"]["driver_libraries"] = {
        "/usr/lib/x86_64-linux-gnu/libcuda.so.535.54.03": "535.54.03",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.54.03": "535.54.03"}
    s["nvml"]["init_rc"] = 18
    s["nvml"]["gpus"] = []
    s["nvml"]["device_count"] = {"value": 0, "rc": -1}
    cuda_fails(s, 803, "/usr/lib/x86_64-linux-gnu/libcuda.so.535.54.03")


FIXTURES = {
    "module-load-failed": module_load_failed,
    "gpu-unsupported": gpu_unsupported,
    "compat-mismatch": compat_mismatch,
    "uvm-hmm": uvm_hmm,
    "after-suspend": after_suspend,
    "container-driver-mismatch": container_driver_mismatch,
}

if __name__ == "__main__":
    for name, stage in FIXTURES.items():
        s = copy.deepcopy(BASE)
        stage(s)
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(s, f, indent=2)
            f.write("\n")
