#!/usr/bin/env python3
"""Kernel-log scanning benchmark: `gpudoctor logs --from F --json` against `grep -c NVRM F`.

Generates (seeded, so every run scans the same bytes) a kernel log in dmesg form
"[%12.6f] msg" of about --size bytes (default 256 MiB) in a temporary directory for each
noise profile (--profile; all by default): realistic noise from a couple dozen kernel
subsystems, in the profiles mostly from one (NVMe, the NVIDIA modules' own chatter, audit,
journald, USB), and 0.1 % NVIDIA lines
(Xid in old and new driver shapes on several GPUs, SXid, AER groups, the NVRM API
mismatch group, other NVRM lines, and NVIDIA lines that are no event). The script
knows every event it planted, folded as gpudoctor folds them (kind, type, code,
gpu), and how often.

Then:
  1. runs gpudoctor once and checks it decoded every planted event with the right
     count and nothing else (sum of counts == planted occurrences); a mismatch
     fails the script (after the timings are printed);
  2. times gpudoctor and `grep -c NVRM` over the same file, best of --runs (3),
     page cache warm (the file is read once first);
  3. prints both throughputs and the ratio gpudoctor/grep per profile, then the worst
     ratio and whether the goals hold on every profile: at least 1 GB/s (10^9 bytes/s)
     and at most 1.5x grep's time. gpudoctor reads a big file in parts, one per CPU it
     may use; the CPU times of both and gpudoctor's time on one CPU (taskset) are
     printed beside the wall times.

Usage: bench/logs_scan.py [GPUDOCTOR] [--size BYTES] [--profile NAME|all] [--runs N]
                          [--seed S] [--tmpdir DIR] [--keep] [--perf]
GPUDOCTOR defaults to build/gpudoctor. Exit status: 0 when decoding is right and
both goals hold, 1 when decoding is wrong, 2 when only a speed goal is missed.
"""

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

GOAL_BYTES_PER_S = 1e9
GOAL_RATIO = 1.5
NVIDIA_LINE_SHARE = 0.001

# --- noise: real-looking lines from kernel subsystems that are not NVIDIA's -------------
# None of them contains a scanner keyword (NVRM, nvidia, Xid, AER:, Bus Error, ...), as on
# a real node where the NVIDIA driver is quiet.


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def mac(rng):
    return ":".join("%02x" % rng.randrange(256) for _ in range(6))


def ip(rng):
    return "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(1, 255))


# Lines both the general mix and a profile's family draw on.
def usb_new_device(r):
    return "usb %d-%d.%d: new high-speed USB device number %d using xhci_hcd" % (
        r.randrange(1, 4), r.randrange(1, 6), r.randrange(1, 5), r.randrange(2, 64))


def usb_disconnect(r):
    return "usb %d-%d: USB disconnect, device number %d" % (
        r.randrange(1, 4), r.randrange(1, 6), r.randrange(2, 64))


def journal_fill_level(r):
    return ("systemd-journald[%d]: Data hash table of /var/log/journal/%s/system.journal has a "
            "fill level at 75.0 (%d of %d items, 8388608 file size, 737 bytes per hash table "
            "item), suggesting rotation." % (r.randrange(300, 900), hexid(r, 32),
                                              r.randrange(8000, 9000), r.randrange(11000, 12000)))


NOISE = [
    lambda r: 'audit: type=1400 audit(%d.%03d:%d): apparmor="DENIED" operation="open" '
    'profile="docker-default" name="/proc/%d/cgroup" pid=%d comm="%s" requested_mask="r" '
    'denied_mask="r" fsuid=0 ouid=0' % (1764600000 + r.randrange(10**6), r.randrange(1000),
                                         r.randrange(10**5), r.randrange(10**5),
                                         r.randrange(10**5), r.choice(["python3", "node", "java"])),
    lambda r: "audit: type=1325 audit(%d.%03d:%d): table=filter family=2 entries=%d op=xt_register "
    "pid=%d comm=\"iptables\"" % (1764600000 + r.randrange(10**6), r.randrange(1000),
                                 r.randrange(10**5), r.randrange(200), r.randrange(10**5)),
    lambda r: "[UFW BLOCK] IN=eno1 OUT= MAC=%s:%s:08:00 SRC=%s DST=%s LEN=%d TOS=0x00 PREC=0x00 "
    "TTL=%d ID=%d DF PROTO=TCP SPT=%d DPT=%d WINDOW=64240 RES=0x00 SYN URGP=0"
    % (mac(r), mac(r), ip(r), ip(r), r.choice([40, 52, 60]), r.choice([52, 63, 64, 128]),
       r.randrange(65536), r.randrange(1024, 65536), r.choice([22, 23, 445, 3389, 8080])),
    lambda r: "EXT4-fs (nvme0n1p%d): mounted filesystem %s-%s r/w with ordered data mode. Quota "
    "mode: none." % (r.randrange(1, 4), hexid(r, 8), hexid(r, 4)),
    lambda r: "EXT4-fs (dm-%d): re-mounted %s-%s. Quota mode: none." % (
        r.randrange(4), hexid(r, 8), hexid(r, 4)),
    usb_new_device,
    usb_disconnect,
    lambda r: "xhci_hcd 0000:00:14.0: xHCI Host Controller",
    lambda r: "xhci_hcd 0000:00:14.0: new USB bus registered, assigned bus number %d" % (
        r.randrange(1, 5)),
    lambda r: "IPv6: ADDRCONF(NETDEV_CHANGE): veth%s: link becomes ready" % hexid(r, 7),
    lambda r: "docker0: port %d(veth%s) entered %s state" % (
        r.randrange(1, 40), hexid(r, 7), r.choice(["blocking", "forwarding", "disabled"])),
    lambda r: "device veth%s entered promiscuous mode" % hexid(r, 7),
    lambda r: "eth0: renamed from veth%s" % hexid(r, 7),
    lambda r: "br-%s: port %d(veth%s) entered forwarding state" % (
        hexid(r, 12), r.randrange(1, 9), hexid(r, 7)),
    lambda r: "mlx5_core 0000:%02x:00.%d: Port module event: module %d, Cable %s" % (
        r.choice([0x4b, 0x8b, 0xca]), r.randrange(2), r.randrange(2),
        r.choice(["plugged", "unplugged"])),
    lambda r: "mlx5_core 0000:%02x:00.%d ens%df%dnp%d: Link %s" % (
        r.choice([0x4b, 0x8b, 0xca]), r.randrange(2), r.randrange(1, 9), r.randrange(2),
        r.randrange(2), r.choice(["up", "down"])),
    journal_fill_level,
    lambda r: "systemd-journald[%d]: /var/log/journal/%s/user-%d.journal: Journal header limits "
    "reached or header out-of-date, rotating." % (r.randrange(300, 900), hexid(r, 32),
                                                 r.choice([1000, 1001, 1002])),
    lambda r: "perf: interrupt took too long (%d > %d), lowering kernel.perf_event_max_sample_rate "
    "to %d" % (r.randrange(2501, 9000), 2500, r.randrange(20000, 80000)),
    lambda r: "TCP: request_sock_TCP: Possible SYN flooding on port %d. Sending cookies.  Check "
    "SNMP counters." % r.choice([80, 443, 8080, 6443]),
    lambda r: "kvm [%d]: ignored rdmsr: 0x%x data 0x0" % (r.randrange(10**5),
                                                       r.choice([0x4e, 0x1c9, 0x3f7, 0x64e])),
    lambda r: "kvm_intel: L1TF CPU bug present and SMT on, data leak possible.",
    lambda r: "nvme nvme%d: I/O %d QID %d timeout, completion polled" % (
        r.randrange(4), r.randrange(1024), r.randrange(1, 64)),
    lambda r: "nvme nvme%d: 64/0/0 default/read/poll queues" % r.randrange(4),
    lambda r: "EDAC MC%d: 1 CE memory read error on CPU_SrcID#%d_MC#%d_Chan#%d_DIMM#0 (channel:%d "
    "slot:0 page:0x%x offset:0x0 grain:32 syndrome:0x0 - err_code:0x0000:0x009f socket:%d "
    "imc:%d rank:%d bg:%d ba:%d row:0x%x col:0x%x)" % (
        r.randrange(2), r.randrange(2), r.randrange(4), r.randrange(2), r.randrange(2),
        r.randrange(1 << 24), r.randrange(2), r.randrange(4), r.randrange(2), r.randrange(4),
        r.randrange(4), r.randrange(1 << 16), r.randrange(1 << 10)),
    lambda r: "mce: [Hardware Error]: Machine check events logged",
    lambda r: "nfs: server %s not responding, still trying" % ip(r),
    lambda r: "nfs: server %s OK" % ip(r),
    lambda r: "sd %d:0:0:0: [sd%s] tag#%d timing out command, waited 180s" % (
        r.randrange(8), r.choice("abcdefgh"), r.randrange(256)),
    lambda r: "ice 0000:%02x:00.%d eno%d: NIC Link is Up 25 Gbps Full Duplex, FEC: RS-FEC, "
    "Autoneg Advertised: On, Autoneg Negotiated: False, Flow Control: None" % (
        r.choice([0x31, 0x32]), r.randrange(2), r.randrange(1, 5)),
    lambda r: "cgroup: fork rejected by pids controller in /system.slice/docker-%s.scope" % (
        hexid(r, 64)),
    lambda r: "overlayfs: upperdir is in-use as upperdir/workdir of another mount, accessing files "
    "from both mounts will result in undefined behavior.",
    lambda r: "INFO: task kworker/u%d:%d:%d blocked for more than 120 seconds." % (
        r.choice([128, 256]), r.randrange(9), r.randrange(10**6)),
    lambda r: "Out of memory: Killed process %d (%s) total-vm:%dkB, anon-rss:%dkB, file-rss:0kB, "
    "shmem-rss:0kB, UID:%d pgtables:%dkB oom_score_adj:0" % (
        r.randrange(10**6), r.choice(["python3", "java", "ray::Worker"]), r.randrange(10**8),
        r.randrange(10**7), r.choice([0, 1000]), r.randrange(10**5)),
    lambda r: "hrtimer: interrupt took %d ns" % r.randrange(10**4, 10**7),
    lambda r: "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { %d-... } %d "
    "jiffies s: %d root: 0x1/." % (r.randrange(256), r.randrange(21000, 60000),
                                   r.randrange(10**4)),
    lambda r: "igb 0000:%02x:00.%d eno%d: igb: eno%d NIC Link is Down" % (
        r.choice([0x03, 0x04]), r.randrange(2), r.randrange(1, 3), r.randrange(1, 3)),
]

# --- NVIDIA lines ------------------------------------------------------------------------
# Shapes from docs/nvidia-facts.md §1.4, §2 and §7.3 (open-gpu-kernel-modules
# 595.45.04 format strings, gpud test data, Linux AER), with addresses, pids and names varied.

GPUS = ["0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00",
        "0000:9a:00", "0000:ab:00", "0000:ba:00", "0000:db:00"]  # an 8-GPU HGX
UPSTREAM = {g: "0000:%02x:01.0" % (int(g[5:7], 16) - 1) for g in GPUS}  # PCIe switch ports
OLD_GPU = "0000:03:00"  # a node still on a pre-R515 driver (no "PCI:", no pid/name)
NVSWITCHES = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]
PROCS = ["python3", "pt_main_thread", "nvidia-smi", "dcgmi", "ray::Trainer"]


def gpu_key(addr):
    """The form gpudoctor reports a GPU in ("0000:18:00" -> "0000:18:00.0")."""
    return addr if "." in addr else addr + ".0"


def who(r):
    return "pid=%d, name=%s, " % (r.randrange(1000, 4 * 10**6), r.choice(PROCS))


def xid(code, text, shape="process"):
    """An Xid line in one driver generation's shape: "process" (515..570.86, pid and name),
    "unknown" (pid='<unknown>'), "bare" (>= 570.124.04 without process), "mig" (GPU-I)."""
    def make(r):
        g = r.choice(GPUS)
        head = "PCI:%s" % g + (" GPU-I:%02d" % r.randrange(1, 8) if shape == "mig" else "")
        if shape in ("process", "mig"):
            pre = who(r)
        elif shape == "unknown":
            pre = "pid='<unknown>', name=<unknown>, "
        else:
            pre = ""
        return ["NVRM: Xid (%s): %d, %s%s" % (head, code, pre, text)], ("xid", "", code, gpu_key(g))
    return make


def old_xid(code, text):
    def make(r):
        return ["NVRM: Xid (%s): %d, %s" % (OLD_GPU, code, text)], ("xid", "", code,
                                                                   gpu_key(OLD_GPU))
    return make


def sxid(code, severity, text):
    def make(r):
        n = r.randrange(len(NVSWITCHES))
        line = "nvidia-nvswitch%d: SXid (PCI:%s): %05d, %s, %s" % (
            n, NVSWITCHES[n], code, severity, text)
        return [line], ("sxid", severity.lower(), code, NVSWITCHES[n])
    return make


def aer(kind, severity, layer, status, bit):
    """Root port's AER line, then the device's decoded lines (Linux drivers/pci/pcie/aer.c)."""
    word = {"corrected": "Corrected", "uncorrected-nonfatal": "Uncorrected (Non-Fatal)",
            "uncorrected-fatal": "Uncorrected (Fatal)"}[kind]
    def make(r):
        g = r.choice(GPUS)
        d = gpu_key(g)
        agent = "Receiver ID" if kind == "corrected" else "Requester ID"
        return [
            "pcieport %s: AER: %s%s error received: %s" % (
                UPSTREAM[g], r.choice(["", "Multiple "]), word, d),
            "nvidia %s: PCIe Bus Error: severity=%s, type=%s, (%s)" % (d, severity, layer, agent),
            "nvidia %s:   device [10de:2330] error status/mask=%s/0000e000" % (d, status),
            "nvidia %s:    %s" % (d, bit),
        ], ("aer", kind, 0, d)
    return make


def api_mismatch(r):
    client = r.choice(["nvidia-smi", "python3", "dcgmi", "nv-hostengine"])
    new, old = r.choice([("550.54.14", "535.104.05"), ("570.86.15", "550.127.05")])
    return [
        "NVRM: API mismatch: the client '%s' (pid %d)" % (client, r.randrange(1000, 10**6)),
        "NVRM: has the version %s, but this kernel module has" % new,
        "NVRM: the version %s.  Please make sure that this" % old,
        "NVRM: kernel module and all NVIDIA driver components",
        "NVRM: have the same version.",
    ], ("nvrm", "api-mismatch", 0, "")


def nvrm_gpu_line(kind_type, text):
    def make(r):
        g = r.choice(GPUS)
        return ["NVRM: GPU %s: %s" % (gpu_key(g), text)], ("nvrm", kind_type, 0, gpu_key(g))
    return make


def no_event(lines):
    """NVIDIA lines that are no event: the scanner's prefilter hits them, the decoder drops them."""
    def make(r):
        g = r.choice(GPUS)
        return [lines(r, g)], None
    return make


# (weight, generator). Weights favour what real nodes print most: Xid 13/31/43 from
# applications, corrected AER, NVSwitch non-fatal SXids.
NVIDIA = [
    (6, xid(13, "Graphics Exception: ESR 0x405840=0xa0040800")),
    (4, xid(13, "Graphics Exception: ESR 0x50e648=0x0 0x50e650=0x0 0x50e644=0xd3eff2", "bare")),
    (6, xid(31, "Ch 0000000a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted "
            "@ 0x7f4e_c0200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")),
    (4, xid(43, "Ch 00000008")),
    (2, xid(45, "Ch 00000010 caused by previous Xid 31", "bare")),
    (1, xid(48, "DBE (double bit error)", "unknown")),
    (1, xid(63, "Row Remapping: New row marked for remapping, reset gpu to activate.", "bare")),
    (1, xid(74, "NVLink: fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)")),
    (1, xid(79, "GPU has fallen off the bus.", "unknown")),
    (1, xid(79, "GPU has fallen off the bus.", "bare")),
    (2, xid(94, "Contained: CE User Channel (0x9). RST: No, D-RST: No", "mig")),
    (1, xid(95, "Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No")),
    (1, xid(119, "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function "
             "103 (GSP_RM_ALLOC) (0x2081 0x4).")),
    (1, xid(120, "GSP task exception: store access page fault (cause:0xf) @ pc:0x13ebd80, "
             "partition:2#0, task:3", "bare")),
    (1, xid(149, "NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 "
             "0x00000000 0x00000000 0x00000000)", "bare")),
    (1, xid(154, "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset "
             "Required)", "bare")),
    (2, old_xid(14, "Channel 00000001")),
    (1, old_xid(13, "0000 00000000 0000a297 00001b0c 00000000 00000000")),
    (4, sxid(12028, "Non-fatal", "Link 32 egress non-posted PRIV error (First)")),
    (1, sxid(20034, "Fatal", "Link 30 LTSSM Fault Up")),
    (5, aer("corrected", "Corrected", "Physical Layer", "00000001", "[ 0] RxErr                  (First)")),
    (1, aer("corrected", "Corrected", "Data Link Layer", "00000080", "[ 7] BadDLLP               ")),
    (1, aer("uncorrected-nonfatal", "Uncorrected (Non-Fatal)", "Transaction Layer", "00004000",
            "[14] CmpltTO                (First)")),
    (1, aer("uncorrected-fatal", "Uncorrected (Fatal)", "Transaction Layer", "00040000",
            "[18] MalfTLP                (First)")),
    (1, api_mismatch),
    (1, nvrm_gpu_line("fallen-off-bus", "GPU has fallen off the bus.")),
    (1, nvrm_gpu_line("rm-init-failed", "RmInitAdapter failed! (0x62:0x40:2168)")),
    (2, no_event(lambda r, g: "NVRM: GPU at PCI:%s: GPU-%s-%s-%s-%s-%s" % (
        g, hexid(r, 8), hexid(r, 4), hexid(r, 4), hexid(r, 4), hexid(r, 12)))),
    (1, no_event(lambda r, g: "NVRM: GPU Board Serial Number: 16523210%05d" % r.randrange(10**5))),
    (1, no_event(lambda r, g: "[drm] [nvidia-drm] [GPU ID 0x0000%s00] Loading driver" % g[5:7])),
    (1, no_event(lambda r, g: "nvidia-nvlink: Nvlink Core is being initialized, major device "
                 "number %d" % r.randrange(230, 240))),
]

# Printed once at boot, before anything else NVIDIA (a reload banner after an open API
# mismatch would be read as its continuation: see bench/README.md).
BOOT = [
    ("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
     ("nvrm", "loaded", 0, "")),
    ("nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.54.15  "
     "Tue Mar  5 22:20:34 UTC 2024", None),
    ("nvidia-uvm: Loaded the UVM driver, major device number 510.", ("uvm", "loaded", 0, "")),
]


# --- noise profiles ----------------------------------------------------------------------
# Real nodes' logs are dominated by one or two chatty subsystems. Each profile draws most
# of its noise from one family (the rest from NOISE above), so that lookalike text
# ("nvme" beside "nvidia"/"NVRM"), lines the prefilter must hand to the decoder (the NVIDIA
# driver's own chatter, which is no event) and long lines are each measured on their own.
# Shapes from the kernel's format strings (drivers/nvme/host/core.c and pci.c, block/blk-core.c,
# drivers/usb/core/hub.c, kernel/audit.c) and the NVIDIA modules' banners.

NVME = [
    lambda r: "nvme nvme%d: pci function 0000:%02x:00.0" % (r.randrange(8), r.randrange(0x40, 0xe0)),
    lambda r: "nvme nvme%d: %d/0/0 default/read/poll queues" % (r.randrange(8), r.choice([32, 64, 128])),
    lambda r: "nvme nvme%d: Shutdown timeout set to %d seconds" % (r.randrange(8), r.choice([8, 10])),
    lambda r: " nvme%dn1: p1 p2" % r.randrange(8),
    lambda r: "nvme nvme%d: I/O %d QID %d timeout, aborting" % (
        r.randrange(8), r.randrange(1024), r.randrange(1, 129)),
    lambda r: "nvme nvme%d: Abort status: 0x%x" % (r.randrange(8), r.choice([0, 0x371])),
    lambda r: "nvme nvme%d: I/O %d QID 0 timeout, reset controller" % (r.randrange(8), r.randrange(32)),
    lambda r: "nvme nvme%d: resetting controller" % r.randrange(8),
    lambda r: "nvme%dn1: I/O Cmd(0x%d) @ LBA %d, %d blocks, I/O Error (sct 0x2 / sc 0x81) MORE DNR" % (
        r.randrange(8), r.choice([1, 2]), r.randrange(10**10), r.choice([8, 16, 256])),
    lambda r: "critical medium error, dev nvme%dn1, sector %d op 0x%d:(%s) flags 0x%x phys_seg %d "
    "prio class 2" % (r.randrange(8), r.randrange(10**10), r.choice([0, 1]),
                      r.choice(["READ", "WRITE"]), r.choice([0, 0x800, 0x80700]), r.randrange(1, 33)),
    lambda r: "nvme nvme%d: failed to set APST feature (%d)" % (r.randrange(8), r.choice([-19, -5])),
    lambda r: "XFS (nvme%dn1): Mounting V5 Filesystem %s-%s" % (r.randrange(8), hexid(r, 8), hexid(r, 4)),
    lambda r: "EXT4-fs (nvme%dn1p%d): mounted filesystem with ordered data mode" % (
        r.randrange(8), r.randrange(1, 3)),
]

# The NVIDIA modules' chatter that is no event: the prefilter hands each line to the decoder.
NVIDIA_CHATTER = [
    lambda r: "nvidia-modeset: WARNING: GPU:%d: Lost display notification (%d:0x00000000); "
    "continuing." % (r.randrange(8), r.randrange(4)),
    lambda r: "[drm] [nvidia-drm] [GPU ID 0x0000%s00] Loading driver" % r.choice(GPUS)[5:7],
    lambda r: "[drm] Initialized nvidia-drm 0.0.0 20160202 for %s.0 on minor %d" % (
        r.choice(GPUS), r.randrange(8)),
    lambda r: "nvidia %s.0: enabling device (0000 -> 0003)" % r.choice(GPUS),
    lambda r: "nvidia-persistenced[%d]: device %s.0 - persistence mode enabled." % (
        r.randrange(1000, 5000), r.choice(GPUS)),
    lambda r: "nvidia-persistenced[%d]: device %s.0 - NUMA memory onlined." % (
        r.randrange(1000, 5000), r.choice(GPUS)),
    lambda r: "nvidia-nvlink: Nvlink Core is being initialized, major device number %d" % (
        r.randrange(230, 240)),
    lambda r: "audit: type=1400 audit(%d.%03d:%d): apparmor=\"ALLOWED\" operation=\"open\" "
    "profile=\"unconfined\" name=\"/dev/nvidia%d\" pid=%d comm=\"nvidia-smi\" "
    "requested_mask=\"wr\"" % (1764600000 + r.randrange(10**6), r.randrange(1000),
                               r.randrange(10**5), r.randrange(8), r.randrange(10**5)),
]

AUDIT = [
    lambda r: "audit: type=1400 audit(%d.%03d:%d): apparmor=\"DENIED\" operation=\"%s\" "
    "class=\"file\" profile=\"%s\" name=\"/proc/%d/%s\" pid=%d comm=\"%s\" "
    "requested_mask=\"r\" denied_mask=\"r\" fsuid=%d ouid=%d" % (
        1764600000 + r.randrange(10**6), r.randrange(1000), r.randrange(10**6),
        r.choice(["open", "getattr", "exec"]), r.choice(["docker-default", "cri-containerd.apparmor.d",
                                                         "snap.lxd.daemon"]),
        r.randrange(10**6), r.choice(["cgroup", "mountinfo", "environ", "status"]), r.randrange(10**6),
        r.choice(["python3", "node", "java", "containerd-shim"]), r.choice([0, 1000]), r.choice([0, 1000])),
    lambda r: "audit: type=1300 audit(%d.%03d:%d): arch=c000003e syscall=%d success=%s exit=%d "
    "a0=%x a1=%x a2=%x a3=0 items=%d ppid=%d pid=%d auid=%d uid=0 gid=0 euid=0 suid=0 fsuid=0 "
    "egid=0 sgid=0 fsgid=0 tty=(none) ses=%d comm=\"%s\" exe=\"/usr/bin/%s\" key=(null)" % (
        1764600000 + r.randrange(10**6), r.randrange(1000), r.randrange(10**6),
        r.choice([2, 59, 257, 322]), r.choice(["yes", "no"]), r.choice([0, 3, -13]),
        r.randrange(1 << 40), r.randrange(1 << 20), r.randrange(1 << 16), r.randrange(3),
        r.randrange(10**6), r.randrange(10**6), r.choice([0, 1000, 4294967295]), r.randrange(10**4),
        r.choice(["runc", "sshd", "kubelet"]), r.choice(["runc", "sshd", "kubelet"])),
    lambda r: "audit: type=1327 audit(%d.%03d:%d): proctitle=%s" % (
        1764600000 + r.randrange(10**6), r.randrange(1000), r.randrange(10**6), hexid(r, 2 * r.randrange(20, 120))),
    lambda r: "audit: type=1325 audit(%d.%03d:%d): table=nat:%d family=2 entries=%d op=nft_register_chain "
    "pid=%d subj=unconfined comm=\"iptables\"" % (
        1764600000 + r.randrange(10**6), r.randrange(1000), r.randrange(10**6), r.randrange(100),
        r.randrange(200), r.randrange(10**6)),
]

JOURNALD = [
    journal_fill_level,
    lambda r: "systemd-journald[%d]: /var/log/journal/%s/system.journal: Journal header limits "
    "reached or header out-of-date, rotating." % (r.randrange(300, 900), hexid(r, 32)),
    lambda r: "systemd-journald[%d]: Under memory pressure, flushing caches." % r.randrange(300, 900),
    lambda r: "systemd-journald[%d]: Missed %d kernel messages" % (r.randrange(300, 900), r.randrange(1, 500)),
    lambda r: "systemd-journald[%d]: Forwarding to syslog missed %d messages." % (
        r.randrange(300, 900), r.randrange(1, 5000)),
    lambda r: "systemd[1]: Started session-%d.scope - Session %d of User ubuntu." % (
        r.randrange(10**5), r.randrange(10**5)),
    lambda r: "systemd[1]: run-containerd-runc-k8s.io-%s-runc.%s.mount: Deactivated successfully." % (
        hexid(r, 64), hexid(r, 6)),
]

USB = [
    usb_new_device,
    usb_disconnect,
    lambda r: "usb %d-%d.%d: New USB device found, idVendor=%04x, idProduct=%04x, bcdDevice= %d.%02d" % (
        r.randrange(1, 4), r.randrange(1, 6), r.randrange(1, 5), r.choice([0x046b, 0x0557, 0x1d6b]),
        r.randrange(1 << 16), r.randrange(10), r.randrange(100)),
    lambda r: "usb %d-%d.%d: New USB device strings: Mfr=1, Product=2, SerialNumber=3" % (
        r.randrange(1, 4), r.randrange(1, 6), r.randrange(1, 5)),
    lambda r: "usb %d-%d.%d: Product: Virtual Keyboard and Mouse" % (
        r.randrange(1, 4), r.randrange(1, 6), r.randrange(1, 5)),
    lambda r: "input: American Megatrends Inc. Virtual Keyboard and Mouse as /devices/pci0000:00/"
    "0000:00:14.0/usb1/1-%d/1-%d.%d/1-%d.%d:1.0/0003:046B:FF10.%04X/input/input%d" % (
        r.randrange(1, 6), r.randrange(1, 6), r.randrange(1, 5), r.randrange(1, 6), r.randrange(1, 5),
        r.randrange(1 << 16), r.randrange(1000)),
    lambda r: "hid-generic 0003:046B:FF10.%04X: input,hidraw%d: USB HID v1.10 Keyboard [American "
    "Megatrends Inc. Virtual Keyboard and Mouse] on usb-0000:00:14.0-%d.%d/input0" % (
        r.randrange(1 << 16), r.randrange(8), r.randrange(1, 6), r.randrange(1, 5)),
    lambda r: "usb %d-%d-port%d: over-current condition" % (r.randrange(1, 4), r.randrange(1, 6), r.randrange(1, 5)),
]

# name -> (family, its share of the noise lines)
PROFILES = {
    "mixed": ([], 0.0),
    "nvme": (NVME, 0.7),
    "nvidia-chatter": (NVIDIA_CHATTER, 0.3),
    "audit": (AUDIT, 0.7),
    "journald": (JOURNALD, 0.7),
    "usb": (USB, 0.7),
}


def noise_pool(r, profile, n=40000):
    """n noise lines (varied, reused by the generator): the profile's family at its share,
    the general mix for the rest."""
    family, share = PROFILES[profile]
    own = round(n * share)
    return ([family[i % len(family)](r) for i in range(own)]
            + [NOISE[i % len(NOISE)](r) for i in range(n - own)])


def generate(path, size, seed, profile="mixed"):
    """Writes the log; returns (planted Counter of event keys, lines, NVIDIA lines)."""
    r = random.Random(seed)
    pool = noise_pool(r, profile)
    weights = [w for w, _ in NVIDIA]
    makers = [m for _, m in NVIDIA]
    avg_group = 1.4  # mean NVIDIA lines per planted group (AER and API mismatch are longer)
    deltas = [0.000012, 0.000850, 0.0131, 0.05, 0.25, 0.3]  # about 12 days in 1 GiB
    planted = Counter()
    lines_total = nvidia_lines = 0
    written = 0
    t = 0.0
    chunk_lines = 65536
    with open(path, "w", encoding="ascii", newline="\n") as f:
        head = []
        for text, key in BOOT:
            t += 0.4
            head.append("[%12.6f] %s\n" % (t, text))
            if key:
                planted[key] += 1
        f.write("".join(head))
        written += sum(len(x) for x in head)
        lines_total += len(head)
        nvidia_lines += len(head)
        while written < size:
            msgs = r.choices(pool, k=chunk_lines)
            groups = round(chunk_lines * NVIDIA_LINE_SHARE / avg_group)
            slots = sorted(r.sample(range(chunk_lines), groups), reverse=True)
            inserted = []  # (position, lines, key)
            for pos in slots:
                lines, key = r.choices(makers, weights)[0](r)
                inserted.append((pos, lines, key))
            for pos, lines, _ in inserted:  # positions descending: earlier ones stay valid
                msgs[pos:pos] = lines
            stamps = itertools.accumulate(r.choices(deltas, k=len(msgs)), initial=t)
            next(stamps)
            out = ["[%12.6f] %s\n" % (s, m) for s, m in zip(stamps, msgs)]
            # The last chunk stops at the line that reaches size, never inside a group.
            keep = len(out)
            if written + sum(map(len, out)) > size:
                keep, acc = 0, written
                while keep < len(out) and acc < size:
                    acc += len(out[keep])
                    keep += 1
                start = 0
                for pos, lines, _ in sorted(inserted):
                    first = pos + start  # index of the group's first line in out
                    if first < keep < first + len(lines):
                        keep = first + len(lines)
                    start += len(lines)
            start = 0
            for pos, lines, key in sorted(inserted):
                if pos + start + len(lines) <= keep:
                    nvidia_lines += len(lines)
                    if key:
                        planted[key] += 1
                start += len(lines)
            t = float(out[keep - 1][1:out[keep - 1].index("]")])
            f.write("".join(out[:keep]))
            written += sum(len(x) for x in out[:keep])
            lines_total += keep
    return planted, lines_total, nvidia_lines


def run_gpudoctor(binary, path):
    p = subprocess.run([binary, "logs", "--from", path, "--json"], capture_output=True,
                       text=True, check=False)
    if p.returncode not in (0, 1, 2):
        sys.exit("logs_scan: %s logs --from exited %d: %s" % (binary, p.returncode,
                                                              p.stderr.strip()[:500]))
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        sys.exit("logs_scan: gpudoctor printed no JSON (%s): %s" % (e, p.stdout[:300]))


def compare(planted, report):
    """Lines describing every difference; empty when decoding is exact."""
    got = Counter()
    for e in report.get("events", []):
        key = (e.get("kind") or "", e.get("type") or "", int(e.get("code") or 0),
               e.get("gpu") or "")
        got[key] += int(e.get("count") or 0)
    problems = []
    for key in sorted(set(planted) | set(got)):
        if planted[key] != got[key]:
            problems.append("  %-60s planted %6d, gpudoctor %6d" % (
                "/".join(str(k) for k in key), planted[key], got[key]))
    if sum(got.values()) != sum(planted.values()):
        problems.append("  occurrences: planted %d, gpudoctor counted %d" % (
            sum(planted.values()), sum(got.values())))
    return problems


def best_time(argv, runs):
    """Best wall time of runs, and the CPU time (user + system, all threads) of that run.
    Output goes to a pipe, never /dev/null: GNU grep notices a /dev/null stdout and stops
    at the first match (grep -c NVRM would "scan" 40 GB/s)."""
    best = None
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdout.read()
        _, _, usage = os.wait4(p.pid, 0)
        p.returncode = 0  # reaped by wait4
        elapsed = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
        if best is None or elapsed < best[0]:
            best = (elapsed, cpu)
    return best


def one_cpu(argv):
    """argv pinned to the first CPU this script may use (taskset): gpudoctor then reads a
    big file in one part, as on a one-CPU machine."""
    if shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"):
        return None
    return ["taskset", "-c", str(min(os.sched_getaffinity(0)))] + argv


def perf_instructions(argv):
    """Instructions retired (perf stat), or None where perf cannot count them."""
    if shutil.which("perf") is None:
        return None
    p = subprocess.run(["perf", "stat", "-x,", "-e", "instructions"] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    for line in p.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("instructions") and fields[0].isdigit():
            return int(fields[0])
    return None


def measure(binary, path, profile, args):
    """Generates one profile's log, checks the decoding, times both tools. Returns
    (decoding right, gpudoctor seconds, grep seconds, bytes)."""
    start = time.perf_counter()
    planted, lines, nv_lines = generate(path, args.size, args.seed, profile)
    size = os.path.getsize(path)
    print("== profile %s" % profile)
    print("log: %s, %d bytes (%.2f GiB), %d lines, %d NVIDIA (%.3f %%), generated in %.1f s"
          % (path if args.keep else "kern.log", size, size / 2**30, lines, nv_lines,
             100.0 * nv_lines / lines, time.perf_counter() - start))
    print("planted: %d distinct events, %d occurrences (seed %d)" % (
        len(planted), sum(planted.values()), args.seed))
    with open(path, "rb") as f:  # page cache warm for both tools
        while f.read(1 << 24):
            pass
    problems = compare(planted, run_gpudoctor(binary, path))
    if problems:
        print("decode: WRONG, %d differences (key kind/type/code/gpu):" % len(problems))
        print("\n".join(problems[:40]))
    else:
        print("decode: every planted event found with its count, nothing else")
    gd_argv = [binary, "logs", "--from", path, "--json"]
    grep_argv = ["grep", "-c", "NVRM", path]
    gd_s, gd_cpu = best_time(gd_argv, args.runs)
    grep_s, grep_cpu = best_time(grep_argv, args.runs)
    pinned = one_cpu(gd_argv)
    one_s = best_time(pinned, args.runs)[0] if pinned else None
    print("gpudoctor logs --from --json: %.3f s, %7.0f MB/s, CPU %.3f s (best of %d)" % (
        gd_s, size / gd_s / 1e6, gd_cpu, args.runs))
    if one_s:
        print("  the same on one CPU:        %.3f s, %7.0f MB/s (taskset)" % (
            one_s, size / one_s / 1e6))
    print("grep -c NVRM:                 %.3f s, %7.0f MB/s, CPU %.3f s (best of %d)" % (
        grep_s, size / grep_s / 1e6, grep_cpu, args.runs))
    print("ratio gpudoctor/grep: %.2f (CPU time %.2f%s)" % (
        gd_s / grep_s, gd_cpu / grep_cpu,
        ", on one CPU %.2f" % (one_s / grep_s) if one_s else ""))
    if args.perf:
        for name, argv in (("gpudoctor", gd_argv), ("grep", grep_argv)):
            n = perf_instructions(argv)
            print("perf %-9s: %s" % (name, "%.2f instructions/byte" % (n / size) if n
                                      else "instructions not countable here"))
    return not problems, gd_s, grep_s, size, one_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpudoctor", nargs="?", default="build/gpudoctor")
    ap.add_argument("--size", type=int, default=1 << 28,
                    help="log size in bytes, per profile (256 MiB)")
    ap.add_argument("--profile", default="all", choices=["all"] + list(PROFILES),
                    help="noise profile (all of them)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each, best kept (3)")
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--tmpdir", default=None, help="where the log is written (TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the logs, print their paths")
    ap.add_argument("--perf", action="store_true", help="also count instructions per byte")
    args = ap.parse_args()
    binary = os.path.abspath(args.gpudoctor)
    if not os.access(binary, os.X_OK):
        sys.exit("logs_scan: no gpudoctor at %s (build it, or pass its path)" % binary)
    profiles = list(PROFILES) if args.profile == "all" else [args.profile]
    print("machine: %s, %d CPUs, %s" % (platform.processor() or platform.machine(),
                                       os.cpu_count(), platform.platform()))
    work = tempfile.mkdtemp(prefix="gd-logs-scan-", dir=args.tmpdir)
    results = {}
    try:
        for profile in profiles:
            path = os.path.join(work, "kern-%s.log" % profile)
            results[profile] = measure(binary, path, profile, args)
            if not args.keep:
                os.unlink(path)
    finally:
        if args.keep:
            print("kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("== summary")
    for profile, (right, gd_s, grep_s, size, one_s) in results.items():
        print("%-15s ratio %.2f, %6.0f MB/s, decoding %s%s" % (
            profile, gd_s / grep_s, size / gd_s / 1e6, "right" if right else "WRONG",
            "; on one CPU %.2f" % (one_s / grep_s) if one_s else ""))
    worst = max(results, key=lambda p: results[p][1] / results[p][2])
    ratio = results[worst][1] / results[worst][2]
    slowest = min(results[p][3] / results[p][1] for p in results)
    fast = slowest >= GOAL_BYTES_PER_S
    close = ratio <= GOAL_RATIO
    print("worst ratio gpudoctor/grep: %.2f (%s)" % (ratio, worst))
    singles = [r[4] / r[2] for r in results.values() if r[4]]
    if singles:
        print("worst ratio on one CPU:     %.2f (information: the goal is the wall time)"
              % max(singles))
    print("goal >= 1 GB/s on every profile: %s; goal <= %.1fx grep on every profile: %s" % (
        "holds" if fast else "MISSED", GOAL_RATIO, "holds" if close else "MISSED"))
    if not all(r[0] for r in results.values()):
        return 1
    return 0 if fast and close else 2


if __name__ == "__main__":
    sys.exit(main())
