#!/usr/bin/env python3
"""Writes the recorded machine trees under tests/roots/ (see README.md).

Each tree holds only the files gpudoctor's file probes read, in the kernel's
real formats. The machines are the ones of tests/roots/README.md (ws-4x4090,
hgx-8xh100) and variants of them; the fake NVML/CUDA scenarios of the same
names describe the same machines.

    tests/roots/make_roots.py           rewrite every tree
    tests/roots/make_roots.py --check   exit 1 if a tree on disk differs

Device nodes cannot live in git: a regular file stands for one, its single
line "char MAJOR:MINOR MODE UID:GID" (see src/probe/devnodes.cc).
"""

import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Link:
    """A symlink in a tree (relative target)."""

    def __init__(self, target):
        self.target = target


def node(major, minor, mode="0666", uid=0, gid=0):
    return f"char {major}:{minor} {mode} {uid}:{gid}\n"


# --- shared pieces -------------------------------------------------------------

WS_VERSION = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  "
              "Thu Feb 22 01:44:30 UTC 2024\n"
              "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n")
HGX_VERSION = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  "
               "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 19:33:09 UTC 2024\n"
               "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n")

PARAMS = """ResmanDebugLevel: 4294967295
RmLogonRC: 1
ModifyDeviceFiles: 1
DeviceFileUID: 0
DeviceFileGID: 0
DeviceFileMode: 438
InitializeSystemMemoryAllocations: 1
UsePageAttributeTable: 4294967295
EnableMSI: 1
EnablePCIeGen3: 0
MemoryPoolSize: 0
KMallocHeapMaxSize: 0
VMallocHeapMaxSize: 0
IgnoreMMIOCheck: 0
EnableStreamMemOPs: 0
EnableUserNUMAManagement: 1
NvLinkDisable: 0
RmProfilingAdminOnly: 1
PreserveVideoMemoryAllocations: 0
EnableS0ixPowerManagement: 0
S0ixPowerManagementVideoMemoryThreshold: 256
DynamicPowerManagement: 3
DynamicPowerManagementVideoMemoryThreshold: 200
RegisterPCIDriver: 1
EnablePCIERelaxedOrderingMode: 0
EnableResizableBar: 0
EnableGpuFirmware: {gsp}
EnableGpuFirmwareLogs: 2
RmNvlinkBandwidthLinkCount: 0
EnableDbgBreakpoint: 0
OpenRmEnableUnsupportedGpus: 1
DmaRemapPeerMmio: 1
ImexChannelCount: 2048
CreateImexChannel0: 0
GrdmaPciTopoCheckOverride: 0
CoherentGPUMemoryMode: ""
RegistryDwords: ""
RegistryDwordsPerDevice: ""
RmMsg: ""
GpuBlacklist: ""
TemporaryFilePath: ""
ExcludedGpus: ""
"""

OTHER_MODULES = """\
snd_hda_intel 57344 3 - Live 0x0000000000000000
snd_hda_codec 204800 2 snd_hda_intel, Live 0x0000000000000000
ext4 1069056 2 - Live 0x0000000000000000
"""

DEVICES_HEAD = """Character devices:
  1 mem
  4 /dev/vc/0
  4 tty
  5 /dev/tty
 10 misc
 13 input
"""
DEVICES_TAIL = """226 drm
239 nvme
Block devices:
  7 loop
  8 sd
259 blkext
"""

PERSISTENCED_CMDLINE = "/usr/bin/nvidia-persistenced\0--user\0nvidia-persistenced\0"
FM_CMDLINE = ("/usr/bin/nv-fabricmanager\0-c\0"
              "/usr/share/nvidia/nvswitch/fabricmanager.cfg\0")

DOCKER_DEVICES_LIST = """c 1:5 rwm
c 1:3 rwm
c 1:9 rwm
c 1:8 rwm
c 5:0 rwm
c 5:1 rwm
c *:* m
b *:* m
c 1:7 rwm
c 136:* rwm
c 5:2 rwm
c 10:200 rwm
"""
CONTAINER_ID = "4f1c2b7d9e0a31c5a8b6f2e4d7c9a0b1e3f5a7c9d1b3e5f7a9c1d3e5f7a9b1c3"


def status(uid, gid, groups):
    """/proc/self/status: the recorded process's credentials."""
    return ("Name:\tgpudoctor\nUmask:\t0002\nState:\tR (running)\n"
            f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
            f"Gid:\t{gid}\t{gid}\t{gid}\t{gid}\n"
            "FDSize:\t64\n"
            f"Groups:\t{' '.join(str(g) for g in groups)} \n")


def limits(address_space="unlimited"):
    """/proc/self/limits with the given soft RLIMIT_AS (bytes)."""
    rows = [("Max cpu time", "unlimited", "unlimited", "seconds"),
            ("Max file size", "unlimited", "unlimited", "bytes"),
            ("Max data size", "unlimited", "unlimited", "bytes"),
            ("Max stack size", "8388608", "unlimited", "bytes"),
            ("Max open files", "1024", "1048576", "files"),
            ("Max locked memory", "8388608", "8388608", "bytes"),
            ("Max address space", address_space, "unlimited", "bytes")]
    out = f"{'Limit':<26}{'Soft Limit':<21}{'Hard Limit':<21}{'Units':<10}\n"
    for name, soft, hard, units in rows:
        out += f"{name:<26}{soft:<21}{hard:<21}{units:<10}\n"
    return out


def meminfo(total_kb, commit_limit_kb, committed_kb):
    return (f"MemTotal:       {total_kb} kB\n"
            f"MemFree:        {total_kb // 2} kB\n"
            f"MemAvailable:   {total_kb * 3 // 4} kB\n"
            "Buffers:          204800 kB\n"
            f"CommitLimit:    {commit_limit_kb} kB\n"
            f"Committed_AS:   {committed_kb} kB\n"
            "HugePages_Total:       0\n")


def pci_function(tree, bdf, vendor, device, sub_vendor, sub_device, cls, driver, numa,
                 cpulist, speed, width, above=(), max_speed=None, max_width=None, config=None):
    """One PCI function. As in sysfs, it lives under its root bus in
    sys/devices/pci<domain>:<bus>/, below the bridges `above` (root port
    first), and sys/bus/pci/devices/<bdf> links to it. speed/width are the
    current link, max_speed/max_width the maximum (default: the same)."""
    host = f"pci{(above[0] if above else bdf)[:7]}"
    rel = "/".join([host, *above, bdf])
    tree[f"sys/bus/pci/devices/{bdf}"] = Link(f"../../../devices/{rel}")
    d = f"sys/devices/{rel}/"
    up = "../" * (len(above) + 3)  # from the function's directory up to sys/
    tree[d + "vendor"] = f"0x{vendor:04x}\n"
    tree[d + "device"] = f"0x{device:04x}\n"
    tree[d + "subsystem_vendor"] = f"0x{sub_vendor:04x}\n"
    tree[d + "subsystem_device"] = f"0x{sub_device:04x}\n"
    tree[d + "class"] = f"0x{cls:06x}\n"
    tree[d + "numa_node"] = f"{numa}\n"
    tree[d + "local_cpulist"] = f"{cpulist}\n"
    tree[d + "current_link_speed"] = link_speed(speed)
    tree[d + "max_link_speed"] = link_speed(max_speed or speed)
    tree[d + "current_link_width"] = f"{width}\n"
    tree[d + "max_link_width"] = f"{max_width or width}\n"
    if config is not None:
        tree[d + "config"] = config
    if driver:
        tree[d + "driver"] = Link(f"{up}bus/pci/drivers/{driver}")
        tree[f"sys/bus/pci/drivers/{driver}/bind"] = ""


def link_speed(speed):
    """sysfs link speed text: "16.0 GT/s PCIe", or "Unknown" (no link)."""
    return "Unknown\n" if speed == "Unknown" else f"{speed} GT/s PCIe\n"


# --- PCI bridges and their config space ------------------------------------------
# A bridge's sysfs `config` is its PCI configuration space: 4096 bytes for a
# PCIe function read by root (non-root reads stop after 64 bytes). The
# generated one holds what lspci and gpudoctor read: the type 1 header, the
# PCI Express capability (port type, link capabilities and status) and the
# extended capabilities AER (0x100) and ACS (0x148) with its control register
# (PCIe Base Spec 7.7.11 ACS Extended Capability; bits 0 SV, 1 TB, 2 RR, 3 CR,
# 4 UF, 5 EC, 6 DT).

ROOT_PORT, UPSTREAM_PORT, DOWNSTREAM_PORT = 4, 5, 6  # PCIe capability port types
SPEED_CODE = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5, "64.0": 6}
ACS_LINUX = 0x1d  # SV|RR|CR|UF: what Linux writes when an IOMMU asks for ACS


def bridge_config(vendor, device, port_type, buses, speed, max_speed, width, max_width,
                  acs_ctrl=None):
    """Config space of a PCIe port; acs_ctrl None: no ACS capability."""
    c = bytearray(4096)
    struct.pack_into("<HHHH", c, 0, vendor, device, 0x0407, 0x0010)  # mem, io, master; caps
    c[0x09:0x0c] = bytes([0x00, 0x04, 0x06])  # class 0x060400, PCI-to-PCI bridge
    c[0x0e] = 0x01  # header type 1
    c[0x18:0x1b] = bytes(buses)  # primary, secondary, subordinate bus
    c[0x34] = 0x40  # capability list
    struct.pack_into("<BBH", c, 0x40, 0x10, 0x00, (port_type << 4) | 2)  # PCIe cap v2
    struct.pack_into("<I", c, 0x4c, SPEED_CODE[max_speed] | (max_width << 4))  # LnkCap
    struct.pack_into("<H", c, 0x52, SPEED_CODE[speed] | (width << 4))  # LnkSta
    nxt = 0x148 if acs_ctrl is not None else 0
    struct.pack_into("<I", c, 0x100, 0x0001 | (2 << 16) | (nxt << 20))  # AER v2
    if acs_ctrl is not None:
        struct.pack_into("<IHH", c, 0x148, 0x000d | (1 << 16), 0x001f, acs_ctrl)
    return bytes(c)


def pci_bridge(tree, bdf, above, vendor, device, port_type, buses, numa, cpulist, speed,
               max_speed, width, max_width, acs_ctrl=None):
    """A root port or PCIe switch port (class 0x060400, bound to pcieport)."""
    pci_function(tree, bdf, vendor, device, vendor, device, 0x060400, "pcieport", numa, cpulist,
                 speed, width, above, max_speed, max_width,
                 bridge_config(vendor, device, port_type, buses, speed, max_speed, width,
                               max_width, acs_ctrl))


def iommu(tree, units, groups, group_type):
    """/sys/class/iommu/<unit> links (units: name -> device directory under
    sys/devices) and /sys/kernel/iommu_groups/<n>/type. An empty class and
    empty groups directory (IOMMU off) hold a .keep file: git keeps no empty
    directory, and sysfs names never start with a dot."""
    for name, where in units.items():
        tree[f"sys/class/iommu/{name}"] = Link(f"../../devices/{where}/{name}")
        tree[f"sys/devices/{where}/{name}/uevent"] = ""
    for g in range(groups):
        tree[f"sys/kernel/iommu_groups/{g}/type"] = group_type + "\n"
    if not units:
        tree["sys/class/iommu/.keep"] = ""
    if not groups:
        tree["sys/kernel/iommu_groups/.keep"] = ""


def information(model, uuid, bdf, minor, irq, vbios, firmware):
    return (f"Model: \t\t {model}\n"
            f"IRQ:   \t\t {irq}\n"
            f"GPU UUID: \t {uuid}\n"
            f"Video BIOS: \t {vbios}\n"
            "Bus Type: \t PCIe\n"
            "DMA Size: \t 47 bits\n"
            "DMA Mask: \t 0x7fffffffffff\n"
            f"Bus Location: \t {bdf}\n"
            f"Device Minor: \t {minor}\n"
            f"GPU Firmware: \t {firmware}\n"
            "GPU Excluded:\t No\n")


def process(tree, pid, comm, cmdline):
    tree[f"proc/{pid}/comm"] = comm[:15] + "\n"
    tree[f"proc/{pid}/cmdline"] = cmdline


def v2_cgroup(tree, path, limits):
    """/proc/self/cgroup for a cgroup v2 host; limits: {ancestor path: memory.max}."""
    tree["proc/self/cgroup"] = f"0::{path}\n"
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        p = "/".join(parts[:i])
        tree[f"sys/fs/cgroup/{p}/memory.max"] = limits.get("/" + p, "max") + "\n"


# --- ws-4x4090 -----------------------------------------------------------------

WS_GPUS = [  # bdf, minor, numa, cpulist
    ("0000:01:00.0", 0, 0, "0-15,32-47"),
    ("0000:21:00.0", 1, 0, "0-15,32-47"),
    ("0000:41:00.0", 2, 1, "16-31,48-63"),
    ("0000:61:00.0", 3, 1, "16-31,48-63"),
]


def ws_uuid(bdf):
    return "GPU-1b9a0c7e-0d3f-4c1e-9a52-0000000000" + bdf[5:7]


WS_CMDLINE = ("BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic "
              "root=UUID=3b0f3c6e-8f1a-4b8e-9d55-2f2f0f1e6a11 ro quiet splash vt.handoff=7")
AMD_HOST, AMD_GPP = 0x1480, 0x1483  # Starship/Matisse Root Complex, GPP Bridge (root port)
AMD_IOMMU = 0x1481  # Starship/Matisse IOMMU


def ws_root_bus(bdf):
    """The root complex a ws GPU hangs off: bus 0x01 -> pci0000:00, 0x21 -> pci0000:20."""
    return f"{bdf[:5]}{int(bdf[5:7], 16) & 0xf0:02x}"


def ws_pci(tree, gpu_driver, narrow=None, acs_ctrl=0, speed=None):
    """The Threadripper Pro board: four root complexes (pci0000:00, :20, :40,
    :60; two per NUMA node), each GPU on its own root port X0:01.1 (AMD GPP
    bridge, Gen4 x16). Idle GPUs run their link at 2.5 GT/s (max 16.0);
    narrow: {gpu bdf: lanes} trained below x16; speed: {gpu bdf: GT/s}
    current speed instead of the idle 2.5 (a GPU under load)."""
    narrow, speed = narrow or {}, speed or {}
    tree["proc/cmdline"] = WS_CMDLINE + "\n"
    iommu(tree, {}, 0, "")  # IOMMU off in the BIOS: no units, no groups
    for bdf, _minor, numa, cpus in WS_GPUS:
        rb = ws_root_bus(bdf)
        # The host bridge: a non-NVIDIA device the probe must skip.
        pci_function(tree, rb + ":00.0", 0x1022, AMD_HOST, 0x1022, AMD_HOST, 0x060000, "", numa,
                     cpus, "Unknown", 0)
        width, gts = narrow.get(bdf, 16), speed.get(bdf, "2.5")
        port = rb + ":01.1"
        bus = int(bdf[5:7], 16)
        pci_bridge(tree, port, (), 0x1022, AMD_GPP, ROOT_PORT, (bus - 1, bus, bus), numa, cpus,
                   gts, "16.0", width, 16, acs_ctrl)
        pci_function(tree, bdf, 0x10de, 0x2684, 0x10de, 0x167c, 0x030000, gpu_driver, numa,
                     cpus, gts, width, (port,), "16.0", 16)
        audio = bdf[:-1] + "1"
        pci_function(tree, audio, 0x10de, 0x22ba, 0x10de, 0x167c, 0x040300, "snd_hda_intel",
                     numa, cpus, gts, width, (port,), "16.0", 16)


def ws_proc_driver(tree, gpus=WS_GPUS):
    tree["proc/driver/nvidia/version"] = WS_VERSION
    tree["proc/driver/nvidia/params"] = PARAMS.format(gsp=0)
    for bdf, minor, _numa, _cpus in gpus:
        tree[f"proc/driver/nvidia/gpus/{bdf}/information"] = information(
            "NVIDIA GeForce RTX 4090", ws_uuid(bdf), bdf, minor, 185 + minor,
            "95.02.18.80.87", "N/A")


def ws_modules(uvm=True):
    mods = ("nvidia_drm 122880 4 - Live 0x0000000000000000 (POE)\n"
            "nvidia_modeset 1355776 6 nvidia_drm, Live 0x0000000000000000 (POE)\n")
    if uvm:
        mods += "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (POE)\n"
    users = "nvidia_uvm,nvidia_modeset," if uvm else "nvidia_modeset,"
    mods += f"nvidia 54206464 {20 if uvm else 16} {users} Live 0x0000000000000000 (POE)\n"
    return mods + OTHER_MODULES


def ws_devices(uvm=True):
    nv = "195 nvidia\n195 nvidia-modeset\n195 nvidiactl\n"
    if uvm:
        nv += "510 nvidia-uvm\n"
    return DEVICES_HEAD + nv + DEVICES_TAIL


def ws_devnodes(tree, uvm=True, gpus=WS_GPUS):
    tree["dev/null"] = node(1, 3)
    tree["dev/nvidiactl"] = node(195, 255)
    tree["dev/nvidia-modeset"] = node(195, 254)
    for _bdf, minor, _numa, _cpus in gpus:
        tree[f"dev/nvidia{minor}"] = node(195, minor)
    if uvm:
        tree["dev/nvidia-uvm"] = node(510, 0)
        tree["dev/nvidia-uvm-tools"] = node(510, 1)


def ws_libs(tree, version="550.54.14"):
    lib = "usr/lib/x86_64-linux-gnu/"
    tree[lib + f"libcuda.so.{version}"] = ""
    tree[lib + "libcuda.so.1"] = Link(f"libcuda.so.{version}")
    tree[lib + f"libnvidia-ml.so.{version}"] = ""
    tree[lib + "libnvidia-ml.so.1"] = Link(f"libnvidia-ml.so.{version}")


# --- the kernel log ---------------------------------------------------------------
# A recorded /dev/kmsg is a regular file holding what read() returns, one
# record per line (PRIO,SEQ,TS_USEC,FLAGS;MESSAGE, dictionary lines start with
# a space; Documentation/ABI/testing/dev-kmsg). proc/uptime is "now" for the
# records' ages.

KMSG_BOOT = [  # (prio, ts_usec, message, dictionary lines)
    (5, 0, "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) "
     "(x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0, GNU ld (GNU Binutils "
     "for Ubuntu) 2.38) #45~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC Wed Sep 11 15:25:05 UTC 2024", []),
    (6, 0, "Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic "
     "root=UUID=3b0f3c6e-8f1a-4b8e-9d55-2f2f0f1e6a11 ro quiet splash vt.handoff=7", []),
    (6, 1204311, "pci 0000:00:00.0: [1022:1480] type 00 class 0x060000 conventional PCI endpoint",
     [" SUBSYSTEM=pci", " DEVICE=+pci:0000:00:00.0"]),
    (6, 2871002, "usb 1-4: new high-speed USB device number 2 using xhci_hcd",
     [" SUBSYSTEM=usb", " DEVICE=c189:1"]),
    (6, 3310456, "EXT4-fs (nvme0n1p2): mounted filesystem 3b0f3c6e-8f1a-4b8e-9d55-2f2f0f1e6a11 "
     "ro with ordered data mode. Quota mode: none.", []),
]


def kmsg_driver(version_line, uvm=True):
    """The nvidia module's load lines (NVRM: loading %s, nv.c)."""
    out = [
        (4, 4123456, "nvidia: loading out-of-tree module taints kernel.", []),
        (4, 4123470, "nvidia: module license 'NVIDIA' taints kernel.", []),
        (5, 4512345, "NVRM: loading " + version_line, []),
    ]
    if uvm:
        out.append((6, 4790211, "nvidia-uvm: Loaded the UVM driver, major device number 510.", []))
    return out


KMSG_LATER = [
    (6, 62001000000, "audit: type=1400 audit(1764669600.123:245): apparmor=\"DENIED\" "
     "operation=\"open\" class=\"file\" profile=\"snap.firefox.firefox\" "
     "name=\"/proc/pressure/memory\" pid=4021 comm=\"firefox\" requested_mask=\"r\" "
     "denied_mask=\"r\" fsuid=1000 ouid=0", []),
]


def kmsg(records):
    """dev/kmsg text; sequence numbers in order from 0."""
    out = ""
    for seq, (prio, ts, msg, dictionary) in enumerate(records):
        out += f"{prio},{seq},{ts},-;{msg}\n"
        out += "".join(d + "\n" for d in dictionary)
    return out


WS_LOADING = "NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024"
HGX_LOADING = ("NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
               "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 19:33:09 UTC 2024")
WS_UPTIME = "86400.25 2700000.10\n"  # one day up; the records' ages count from here
WS_KMSG = KMSG_BOOT + kmsg_driver(WS_LOADING) + KMSG_LATER


def ws_base(tree):
    """Everything of ws-4x4090 that no variant changes."""
    tree["proc/meminfo"] = meminfo(131891232, 74334760, 23456788)
    tree["proc/sys/vm/overcommit_memory"] = "0\n"
    tree["proc/sys/vm/overcommit_ratio"] = "50\n"
    tree["proc/1/cgroup"] = "0::/init.scope\n"
    process(tree, 1, "systemd", "/sbin/init\0splash\0")
    process(tree, 2345, "python3", "python3\0train.py\0")
    v2_cgroup(tree, "/user.slice/user-1000.slice/session-3.scope", {})
    tree["proc/self/status"] = status(1000, 1000, [4, 24, 27, 30, 44, 46, 1000])
    tree["proc/self/limits"] = limits()
    tree["proc/uptime"] = WS_UPTIME
    tree["proc/sys/kernel/dmesg_restrict"] = "1\n"  # Ubuntu's default
    tree["dev/kmsg"] = kmsg(KMSG_BOOT + KMSG_LATER)  # no driver loaded


def ws_4x4090():
    t = {}
    ws_base(t)
    ws_pci(t, "nvidia")
    ws_proc_driver(t)
    t["proc/modules"] = ws_modules()
    t["proc/devices"] = ws_devices()
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "N\n"
    ws_devnodes(t)
    ws_libs(t)
    process(t, 1201, "nvidia-persistenced", PERSISTENCED_CMDLINE)
    t["dev/kmsg"] = kmsg(WS_KMSG)
    return t


def ws_container_host():
    """ws-4x4090 with the NVIDIA Container Toolkit installed (its runtime
    config) and /dev/char as udev fills it: links for the registered
    devices (here /dev/null), none for the NVIDIA nodes nvidia-modprobe made."""
    t = ws_4x4090()
    t["etc/nvidia-container-runtime/config.toml"] = (
        "#accept-nvidia-visible-devices-as-volume-mounts = false\n"
        "[nvidia-container-cli]\nenvironment = []\nldconfig = \"@/sbin/ldconfig.real\"\n"
        "load-kmods = true\n")
    t["dev/char/1:3"] = Link("../null")
    return t


def ws_hidepid():
    """ws-4x4090-container-host whose /proc is mounted hidepid=2 (as in
    NVIDIA/nvidia-docker#645), its /dev/char links made by nvidia-ctk."""
    t = ws_container_host()
    ws_char_links(t)
    t["proc/self/mounts"] = (
        "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
        "proc /proc proc rw,nosuid,nodev,noexec,relatime,gid=4,hidepid=2 0 0\n"
        "tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0\n")
    return t


def ws_char_links(t):
    """/dev/char links to the NVIDIA nodes, as nvidia-ctk makes them."""
    for minor in (0, 1, 2, 3, 254, 255):
        t[f"dev/char/195:{minor}"] = Link("../nvidia" + {254: "-modeset", 255: "ctl"}.get(minor, str(minor)))
    t["dev/char/510:0"] = Link("../nvidia-uvm")
    t["dev/char/510:1"] = Link("../nvidia-uvm-tools")


# A CDI spec as `nvidia-ctk cdi generate` writes it (the shape of
# Igalia/webkit-container-sdk#23's /etc/cdi/nvidia.yaml), for driver
# 535.161.07 and two GPUs: the host has since moved to 550.54.14 and has four.
CDI_STALE = """---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidia-modeset
  - path: /dev/nvidia-uvm
  - path: /dev/nvidia-uvm-tools
  - path: /dev/nvidiactl
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  hooks:
  - args:
    - nvidia-ctk
    - hook
    - update-ldcache
    - --folder
    - /usr/lib/x86_64-linux-gnu
    hookName: createContainer
    path: /usr/bin/nvidia-ctk
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07
    options:
    - ro
    - nosuid
    - nodev
    - bind
  - containerPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.161.07
    hostPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.161.07
    options:
    - ro
    - nosuid
    - nodev
    - bind
  - containerPath: /usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07
    hostPath: /usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07
    options:
    - ro
    - nosuid
    - nodev
    - bind
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
  name: "1"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
    - path: /dev/nvidia1
  name: all
kind: nvidia.com/gpu
"""


def ws_cdi_stale():
    """ws-4x4090-container-host (links made) with the CDI spec above left
    over from before a driver upgrade, as podman#26233 and
    Igalia/webkit-container-sdk#23 describe."""
    t = ws_container_host()
    ws_char_links(t)
    t["etc/cdi/nvidia.yaml"] = CDI_STALE
    return t


def ws_no_cgroups():
    """ws-4x4090-container-host (links made) whose toolkit config says
    no-cgroups = true, as a rootless guide says, while a rootful dockerd
    starts the GPU containers (NVIDIA/nvidia-container-toolkit#381)."""
    t = ws_container_host()
    ws_char_links(t)
    t["etc/nvidia-container-runtime/config.toml"] = (
        "#accept-nvidia-visible-devices-as-volume-mounts = false\n"
        "[nvidia-container-cli]\nenvironment = []\nldconfig = \"@/sbin/ldconfig.real\"\n"
        "load-kmods = true\nno-cgroups = true\n")
    process(t, 1187, "dockerd", "/usr/bin/dockerd\0-H\0fd://\0--containerd=/run/containerd/containerd.sock\0")
    process(t, 1032, "containerd", "/usr/bin/containerd\0")
    return t


def as_pod(t):
    """A container tree as a Kubernetes pod's container: kubepods cgroups, no
    /.dockerenv."""
    t.pop(".dockerenv", None)
    cg = hybrid_cgroup("/kubepods/besteffort/pod5c1e0c2a-7d0e-4f1b-9a3c-2b7f5e8d9a10/" + CONTAINER_ID)
    t["proc/self/cgroup"] = cg
    t["proc/1/cgroup"] = cg
    return t


def container_hami(library_present):
    """A Kubernetes pod given a HAMi vGPU share: HAMi's device plugin wrote
    /usr/local/vgpu/libvgpu.so into /etc/ld.so.preload (Project-HAMi/HAMi#777).
    The library mounted or, as in #777 and #1346, not."""
    # A pod's /dev/shm from an emptyDir of medium Memory: not the 64 MiB default.
    t = as_pod(container(True, devices_allowed=True, shm="16777216k"))
    t["etc/ld.so.preload"] = "/usr/local/vgpu/libvgpu.so\n"
    if library_present:
        t["usr/local/vgpu/libvgpu.so"] = "\x7fELF (HAMi-core, recorded as its first bytes)\n"
    return t


def ws_xid79():
    """ws-4x4090 whose GPU 0000:41:00.0 fell off the bus ~400 s before the
    snapshot (Xid 79, nvidia-facts.md §1.4 line shapes), among unrelated noise."""
    t = ws_4x4090()
    uuid = ws_uuid("0000:41:00.0")
    t["dev/kmsg"] = kmsg(WS_KMSG + [
        (6, 85990100000, "usb 1-4: USB disconnect, device number 2", [" SUBSYSTEM=usb"]),
        (4, 85990123456, f"NVRM: GPU at PCI:0000:41:00: {uuid}", []),
        (4, 85990123480, "NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, "
         "GPU has fallen off the bus.", []),
        (4, 85990123500, "NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.", []),
        (6, 86010000000, "EXT4-fs (nvme0n1p2): re-mounted 3b0f3c6e-8f1a-4b8e-9d55-2f2f0f1e6a11 "
         "r/w. Quota mode: none.", []),
    ])
    return t


def ws_x4():
    """ws-4x4090 whose GPU 0000:21:00.0 trained down to x4 (a riser, a dirty
    slot): its root port and the GPU both report 4 of 16 lanes. It runs at
    its full 16.0 GT/s, as under load."""
    t = ws_4x4090()
    for k in [k for k in t if k.startswith(("sys/bus/pci/", "sys/devices/pci"))]:
        del t[k]
    ws_pci(t, "nvidia", narrow={"0000:21:00.0": 4}, speed={"0000:21:00.0": "16.0"})
    return t


# A consumer board with a PLX PEX 8747 switch (Gen3, 48 lanes: x16 up, 4 x8
# down) on the CPU's root port, all four GPUs behind it, ACS on in every
# port (Linux enables it when an IOMMU is on) and the AMD IOMMU translating
# (amd_iommu=on, default DMA domains): peer-to-peer between the GPUs is sent
# up to the root complex and through the IOMMU.
ACS_GPUS = [  # bdf, minor, numa, cpulist
    ("0000:03:00.0", 0, 0, "0-31"),
    ("0000:04:00.0", 1, 0, "0-31"),
    ("0000:05:00.0", 2, 0, "0-31"),
    ("0000:06:00.0", 3, 0, "0-31"),
]
ACS_DOWNSTREAM = ["0000:02:08.0", "0000:02:09.0", "0000:02:10.0", "0000:02:11.0"]
PLX, PEX8747 = 0x10b5, 0x8747


def ws_acs():
    t = ws_4x4090()
    for k in [k for k in t if k.startswith(("sys/bus/pci/", "sys/devices/", "sys/class/iommu",
                                             "sys/kernel/iommu_groups", "proc/driver/nvidia/gpus",
                                             "dev/nvidia"))]:
        del t[k]
    t["proc/cmdline"] = WS_CMDLINE.replace(" ro ", " ro amd_iommu=on ") + "\n"
    iommu(t, {"ivhd0": "pci0000:00/0000:00:00.2/iommu"}, 24, "DMA-FQ")
    cpus = "0-31"
    pci_function(t, "0000:00:00.0", 0x1022, AMD_HOST, 0x1022, AMD_HOST, 0x060000, "", 0, cpus,
                 "Unknown", 0)
    pci_function(t, "0000:00:00.2", 0x1022, AMD_IOMMU, 0x1022, AMD_IOMMU, 0x080600, "", 0, cpus,
                 "Unknown", 0)
    root, up = "0000:00:01.1", "0000:01:00.0"
    pci_bridge(t, root, (), 0x1022, AMD_GPP, ROOT_PORT, (0, 1, 6), 0, cpus, "8.0", "16.0", 16,
               16, ACS_LINUX)
    pci_bridge(t, up, (root,), PLX, PEX8747, UPSTREAM_PORT, (1, 2, 6), 0, cpus, "8.0", "8.0",
               16, 16)  # an upstream port has no ACS capability
    for (bdf, _minor, numa, _c), down in zip(ACS_GPUS, ACS_DOWNSTREAM):
        bus = int(bdf[5:7], 16)
        pci_bridge(t, down, (root, up), PLX, PEX8747, DOWNSTREAM_PORT, (2, bus, bus), numa, cpus,
                   "2.5", "8.0", 8, 8, ACS_LINUX)
        pci_function(t, bdf, 0x10de, 0x2684, 0x10de, 0x167c, 0x030000, "nvidia", numa, cpus,
                     "2.5", 8, (root, up, down), "16.0", 16)
        pci_function(t, bdf[:-1] + "1", 0x10de, 0x22ba, 0x10de, 0x167c, 0x040300,
                     "snd_hda_intel", numa, cpus, "2.5", 8, (root, up, down), "16.0", 16)
    ws_proc_driver(t, ACS_GPUS)
    ws_devnodes(t, gpus=ACS_GPUS)
    return t


def no_driver():
    t = {}
    ws_base(t)
    ws_pci(t, "")
    t["proc/modules"] = OTHER_MODULES
    t["proc/devices"] = DEVICES_HEAD + DEVICES_TAIL
    t["dev/null"] = node(1, 3)
    return t


def new_kernel():
    """The driver was built by DKMS for 6.8.0-40-generic; the machine now runs
    6.8.0-45-generic, for which DKMS built nothing: no module, no driver."""
    t = no_driver()
    t["proc/sys/kernel/osrelease"] = "6.8.0-45-generic\n"
    base = ("kernel/drivers/net/virtio_net.ko.zst: kernel/net/core/failover.ko.zst\n"
            "kernel/fs/ext4/ext4.ko.zst: kernel/lib/crc16.ko.zst kernel/fs/mbcache.ko.zst "
            "kernel/fs/jbd2/jbd2.ko.zst\n"
            "kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n")
    t["lib/modules/6.8.0-45-generic/modules.dep"] = base
    t["lib/modules/6.8.0-40-generic/modules.dep"] = base + (
        "updates/dkms/nvidia.ko.zst:\n"
        "updates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\n"
        "updates/dkms/nvidia-modeset.ko.zst: updates/dkms/nvidia.ko.zst\n")
    return t


def nouveau():
    t = {}
    ws_base(t)
    ws_pci(t, "nouveau")
    t["proc/modules"] = ("nouveau 3096576 3 - Live 0x0000000000000000\n"
                         "drm_ttm_helper 12288 1 nouveau, Live 0x0000000000000000\n"
                         "mxm_wmi 12288 1 nouveau, Live 0x0000000000000000\n" + OTHER_MODULES)
    t["proc/devices"] = DEVICES_HEAD + DEVICES_TAIL
    t["dev/null"] = node(1, 3)
    t["dev/dri/card0"] = node(226, 0, "0660", 0, 44)
    return t


def ws_no_uvm():
    t = ws_4x4090()
    t["proc/modules"] = ws_modules(uvm=False)
    t["proc/devices"] = ws_devices(uvm=False)
    del t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"]
    del t["dev/nvidia-uvm"]
    del t["dev/nvidia-uvm-tools"]
    t["dev/kmsg"] = kmsg(KMSG_BOOT + kmsg_driver(WS_LOADING, uvm=False) + KMSG_LATER)
    return t


def ws_ulimit():
    """The classic field report: the job runs under `ulimit -v 33554432` (32 GiB)."""
    t = ws_4x4090()
    t["proc/self/limits"] = limits(str(32 << 30))
    return t


def ws_devnode_perms():
    """Nodes 0660 root:video (44, as with NVreg_DeviceFileMode=0660/GID=44), user not in video."""
    t = ws_4x4090()
    t["proc/self/status"] = status(1000, 1000, [4, 24, 27, 1000])
    t["proc/driver/nvidia/params"] = (PARAMS.format(gsp=0)
                                      .replace("DeviceFileGID: 0", "DeviceFileGID: 44")
                                      .replace("DeviceFileMode: 438", "DeviceFileMode: 432"))
    for k in [k for k in t if k.startswith("dev/nvidia")]:
        t[k] = t[k].replace(" 0666 0:0", " 0660 0:44")
    return t


def ws_no_devnodes():
    t = ws_4x4090()
    for k in [k for k in t if k.startswith("dev/nvidia")]:
        del t[k]
    return t


# --- hgx-8xh100 ---------------------------------------------------------------

HGX_GPUS = [  # bdf, minor, numa, cpulist
    ("0000:18:00.0", 0, 0, "0-55,112-167"),
    ("0000:2a:00.0", 1, 0, "0-55,112-167"),
    ("0000:3a:00.0", 2, 0, "0-55,112-167"),
    ("0000:5d:00.0", 3, 0, "0-55,112-167"),
    ("0000:9a:00.0", 4, 1, "56-111,168-223"),
    ("0000:ab:00.0", 5, 1, "56-111,168-223"),
    ("0000:ba:00.0", 6, 1, "56-111,168-223"),
    ("0000:db:00.0", 7, 1, "56-111,168-223"),
]
HGX_SWITCHES = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]
HGX_JOB_CGROUP = "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0"


def hgx_uuid(bdf):
    return "GPU-5f2e81a4-7b6c-4d8e-8f10-0000000000" + bdf[5:7]


HGX_CMDLINE = ("BOOT_IMAGE=/boot/vmlinuz-5.15.0-1042-nvidia "
               "root=UUID=9c2d7e41-5b3a-4f0e-8c1d-6a7b8c9d0e1f ro intel_iommu=on iommu=pt "
               "console=tty0 console=ttyS0,115200n8")
INTEL_ROOT_PORT = 0x352a  # Sapphire Rapids PCIe root port
BRCM, PEX890XX = 0x1000, 0xc030  # Broadcom / LSI PEX890xx PCIe Gen 5 switch
# (root bus, GPUs): each pair of GPUs behind one PEX890xx on a root port of
# its own root bus (an IIO stack); two pairs per socket.
HGX_PAIRS = [("0000:15", ("0000:18:00.0", "0000:2a:00.0")),
             ("0000:37", ("0000:3a:00.0", "0000:5d:00.0")),
             ("0000:97", ("0000:9a:00.0", "0000:ab:00.0")),
             ("0000:b7", ("0000:ba:00.0", "0000:db:00.0"))]


def hgx_pci(t):
    """Two sockets; on each, two root ports with a Broadcom PEX890xx switch
    (Gen5) and two H100s below it (0000:RR:01.0 -> upstream port
    (RR+1):00.0 -> downstream ports (RR+2):00.0 and :01.0 -> GPU). The four
    NVSwitches sit behind a switch of their own on pci0000:00. ACS control
    is 0 everywhere and the IOMMU is in passthrough (intel_iommu=on
    iommu=pt), as NVIDIA's tuning guides ask."""
    t["proc/cmdline"] = HGX_CMDLINE + "\n"
    iommu(t, {f"dmar{i}": "virtual/iommu" for i in range(8)}, 64, "identity")
    pci_function(t, "0000:00:00.0", 0x8086, 0x09a2, 0x8086, 0x0000, 0x088000, "", 0,
                 "0-55,112-167", "Unknown", 0)
    gpus = {bdf: (numa, cpus) for bdf, _minor, numa, cpus in HGX_GPUS}

    def switch(rb, numa, cpus, devices, speed, width):
        """Root port, switch upstream port, one downstream port per device."""
        rbn = int(rb[5:7], 16)
        root, up = f"{rb}:01.0", f"{rb[:5]}{rbn + 1:02x}:00.0"
        last = max(int(d[5:7], 16) for d in devices)
        pci_bridge(t, root, (), 0x8086, INTEL_ROOT_PORT, ROOT_PORT, (rbn, rbn + 1, last), numa,
                   cpus, "32.0", "32.0", 16, 16, 0)
        pci_bridge(t, up, (root,), BRCM, PEX890XX, UPSTREAM_PORT, (rbn + 1, rbn + 2, last), numa,
                   cpus, "32.0", "32.0", 16, 16)
        downs = []
        for i, dev in enumerate(devices):
            down = f"{rb[:5]}{rbn + 2:02x}:{i:02x}.0"
            bus = int(dev[5:7], 16)
            pci_bridge(t, down, (root, up), BRCM, PEX890XX, DOWNSTREAM_PORT, (rbn + 2, bus, bus),
                       numa, cpus, speed, speed, width, width, 0)
            downs.append((root, up, down))
        return downs

    for rb, pair in HGX_PAIRS:
        numa, cpus = gpus[pair[0]]
        for bdf, above in zip(pair, switch(rb, numa, cpus, pair, "32.0", 16)):
            pci_function(t, bdf, 0x10de, 0x2330, 0x10de, 0x16c1, 0x030200, "nvidia", numa, cpus,
                         "32.0", 16, above)
    cpus0 = "0-55,112-167"
    # Root port 0000:00:01.0 -> upstream 0000:03:00.0 -> 0000:04:0N.0 -> NVSwitch 0000:0(5+N):00.0
    root, up = "0000:00:01.0", "0000:03:00.0"
    pci_bridge(t, root, (), 0x8086, INTEL_ROOT_PORT, ROOT_PORT, (0, 3, 8), 0, cpus0, "16.0",
               "32.0", 16, 16, 0)
    pci_bridge(t, up, (root,), BRCM, PEX890XX, UPSTREAM_PORT, (3, 4, 8), 0, cpus0, "16.0", "32.0",
               16, 16)
    for i, bdf in enumerate(HGX_SWITCHES):
        down = f"0000:04:{i:02x}.0"
        bus = int(bdf[5:7], 16)
        pci_bridge(t, down, (root, up), BRCM, PEX890XX, DOWNSTREAM_PORT, (4, bus, bus), 0, cpus0,
                   "16.0", "16.0", 2, 2, 0)
        pci_function(t, bdf, 0x10de, 0x22a3, 0x10de, 0x1796, 0x068000, "nvidia", 0, cpus0,
                     "16.0", 2, (root, up, down))


def hgx_8xh100():
    t = {}
    t["proc/meminfo"] = meminfo(2113638400, 1064819200, 81234567)
    t["proc/sys/vm/overcommit_memory"] = "0\n"
    t["proc/sys/vm/overcommit_ratio"] = "50\n"
    t["proc/1/cgroup"] = "0::/init.scope\n"
    process(t, 1, "systemd", "/sbin/init\0")
    # A Slurm job: its job cgroup (an ancestor) holds the 1 TiB limit.
    v2_cgroup(t, HGX_JOB_CGROUP,
              {"/system.slice/slurmstepd.scope/job_4242": str(1 << 40)})
    t["proc/self/status"] = status(1000, 1000, [1000])
    t["proc/self/limits"] = limits()
    hgx_pci(t)
    for bdf, minor, _numa, _cpus in HGX_GPUS:
        t[f"proc/driver/nvidia/gpus/{bdf}/information"] = information(
            "NVIDIA H100 80GB HBM3", hgx_uuid(bdf), bdf, minor, 0, "96.00.74.00.0D", "550.54.15")
    t["proc/driver/nvidia/version"] = HGX_VERSION
    t["proc/driver/nvidia/params"] = PARAMS.format(gsp=1)
    t["proc/modules"] = (
        "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia_modeset 1355776 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia_uvm 4956160 8 - Live 0x0000000000000000 (OE)\n"
        "nvidia 8650752 186 nvidia_peermem,nvidia_modeset,nvidia_uvm, "
        "Live 0x0000000000000000 (OE)\n"
        "ib_core 462848 9 nvidia_peermem, Live 0x0000000000000000\n" + OTHER_MODULES)
    t["proc/devices"] = (DEVICES_HEAD + "195 nvidia\n195 nvidia-modeset\n195 nvidiactl\n"
                         "236 nvidia-caps\n237 nvidia-caps-imex-channels\n"
                         "507 nvidia-nvlink\n508 nvidia-nvswitch\n510 nvidia-uvm\n" + DEVICES_TAIL)
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "N\n"
    t["dev/null"] = node(1, 3)
    t["dev/nvidiactl"] = node(195, 255)
    t["dev/nvidia-modeset"] = node(195, 254)
    for _bdf, minor, _numa, _cpus in HGX_GPUS:
        t[f"dev/nvidia{minor}"] = node(195, minor)
    t["dev/nvidia-uvm"] = node(510, 0)
    t["dev/nvidia-uvm-tools"] = node(510, 1)
    t["dev/nvidia-nvswitchctl"] = node(508, 255)
    for i in range(len(HGX_SWITCHES)):
        t[f"dev/nvidia-nvswitch{i}"] = node(508, i)
    t["dev/nvidia-caps/nvidia-cap1"] = node(236, 1, "0400")
    t["dev/nvidia-caps/nvidia-cap2"] = node(236, 2, "0444")
    ws_libs(t, "550.54.15")
    process(t, 2201, "nvidia-persistenced", PERSISTENCED_CMDLINE)
    process(t, 2301, "nv-fabricmanager", FM_CMDLINE)
    t["proc/2301/exe"] = Link("/usr/bin/nv-fabricmanager")
    fabric_manager_files(t, "550.54.15")
    t["proc/uptime"] = "604800.50 90000000.00\n"
    t["proc/sys/kernel/dmesg_restrict"] = "1\n"
    # The NVSwitch open line: gpud test data (nvidia-facts.md §7.3), with
    # this tree's nvidia-nvswitch major.
    t["dev/kmsg"] = kmsg(KMSG_BOOT + kmsg_driver(HGX_LOADING) + [
        (6, 5206764 + i, f"nvidia-nvswitch{i}: open (major=508)", []) for i in range(4)])
    return t


def hgx_no_fm():
    t = hgx_8xh100()
    stop_process(t, 2301)
    return t


# --- the fabric chain (docs/fabric.md): HGX H100, HGX B200, a GB200 tray ----------

# The kernel's boot time (/proc/stat btime, 2024-12-01 00:00 UTC): the fabric
# manager's log lines below are a day later, after it in any time zone.
FABRIC_BTIME = 1733011200
FM_UNIT = "nvidia-fabricmanager.service"
# nvidia-fabricmanager's log (/var/log/fabricmanager.log): "[date] [LEVEL]
# [tid N] message". The messages are the fabric manager's own, from public
# threads (docs/fabric.md names them); dates and tids are this tree's.
FM_STARTED = ("[Dec 02 2024 12:00:41] [INFO] [tid 2318] Successfully configured all the "
              "available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support "
              "will be enabled once the GPUs are successfully registered with the NVLink "
              "fabric.\n")


def stop_process(t, pid):
    for f in ("comm", "cmdline", "exe"):
        t.pop(f"proc/{pid}/{f}", None)


def fabric_manager_files(t, version, enabled=True):
    """The fabric manager as its package installs it: binary, unit (enabled
    by a multi-user.target.wants link), dpkg stanza, and a log."""
    t["usr/bin/nv-fabricmanager"] = ""
    t[f"lib/systemd/system/{FM_UNIT}"] = "[Unit]\nDescription=NVIDIA fabric manager service\n"
    if enabled:
        t[f"etc/systemd/system/multi-user.target.wants/{FM_UNIT}"] = Link(
            f"/lib/systemd/system/{FM_UNIT}")
    branch = version.split(".")[0]
    t["var/lib/dpkg/status"] = (
        "Package: libc6\nStatus: install ok installed\nVersion: 2.35-0ubuntu3.6\n\n"
        f"Package: nvidia-fabricmanager-{branch}\nStatus: install ok installed\n"
        f"Architecture: amd64\nVersion: {version}-1\n\n"
        "Package: zlib1g\nStatus: install ok installed\nVersion: 1:1.2.11.dfsg-2ubuntu9.2\n")
    t["proc/stat"] = (f"cpu  1 2 3 4 5 6 7 8 9 10\nintr 0\nctxt 1\nbtime {FABRIC_BTIME}\n"
                      "processes 4242\n")
    t["var/log/fabricmanager.log"] = FM_STARTED


def hgx_switch_lost():
    """NVSwitch 0000:08:00.0 gone from the bus: the fabric manager refused
    the topology (its line as in nvidia-facts.md §2.2) and stopped."""
    t = hgx_8xh100()
    for rel in [r for r in t if "0000:08:00.0" in r or r.endswith("0000:04:03.0")]:
        del t[rel]
    del t["dev/nvidia-nvswitch3"]
    stop_process(t, 2301)
    t["var/log/fabricmanager.log"] = (
        "[Dec 02 2024 12:00:39] [ERROR] [tid 2318] detected number of NVSwitches don't match "
        "with any supported system topology, aborting fabric manager\n")
    return t


def hgx_fm_missing():
    """The fabric manager never installed: no binary, unit, package or log."""
    t = hgx_8xh100()
    stop_process(t, 2301)
    for rel in ["usr/bin/nv-fabricmanager", f"lib/systemd/system/{FM_UNIT}",
                f"etc/systemd/system/multi-user.target.wants/{FM_UNIT}",
                "var/log/fabricmanager.log"]:
        del t[rel]
    t["var/lib/dpkg/status"] = (
        "Package: libc6\nStatus: install ok installed\nVersion: 2.35-0ubuntu3.6\n")
    return t


def hgx_fm_mismatch():
    """A fabric manager package of another build than the driver: it refuses
    to start in the words of NVIDIA/gpu-operator#544 (this tree's versions)."""
    t = hgx_8xh100()
    stop_process(t, 2301)
    fabric_manager_files(t, "550.54.14")
    t["var/log/fabricmanager.log"] = (
        "[Dec 02 2024 12:00:39] [ERROR] [tid 2318] fabric manager NVIDIA GPU driver interface "
        "version 550.54.14 don't match with driver version 550.54.15. Please update with "
        "matching NVIDIA driver package.\n")
    return t


B200_DRIVER = "570.124.06"
B200_VERSION = (f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {B200_DRIVER}  "
                "Release Build  (dvs-builder@U16-I3-B03-4-3)  Wed Feb 26 02:18:34 UTC 2025\n"
                "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n")
B200_LOADING = B200_VERSION.split("\n")[0].replace("NVRM version: ", "")
MLNX, CX7 = 0x15b3, 0x1021  # Mellanox MT2910 Family [ConnectX-7]
# The ConnectX-7 of an NVLink5 baseboard: two functions on one port, the
# full PF and the limited PF that the fabric manager and NVLSM use; its VPD
# names the switch-management model, SW_MNG (Fabric Manager User Guide,
# HGX B200/B300). This VPD is this tree's: a product-name tag and the
# vendor keyword with that value, not a dump of a real one.
B200_BRIDGE = [("0000:05:00.0", "mlx5_0", False), ("0000:05:00.1", "mlx5_1", True)]
B200_NIC = ("0000:1a:00.0", "mlx5_2")  # a compute NIC, not the bridge
PORT_ACTIVE_SM = "0x2651e848"     # IsSMDisabled (bit 10) clear
PORT_SM_DISABLED = "0x2651ec48"   # bit 10 set


def vpd(management):
    """VPD: the product-name tag, then the read-only keywords with SMDL."""
    smdl = "SW_MNG" if management else "NIC"
    return (b"\x82\x0aConnectX-7\x90\x0c" + b"SMDL" + bytes([len(smdl)]) + smdl.encode() +
            b"\x78")


def ib_function(t, bdf, ib, lpf, management, numa, cpus):
    """A ConnectX-7 function on its root bus, mlx5_core bound, with its IB
    device `ib` (present only while mlx5_ib is loaded) and that device's
    port 1. On the bridge the full PF's port has the subnet manager
    disabled; the limited PF's is the one NVLSM uses."""
    pci_function(t, bdf, MLNX, CX7, MLNX, 0x0027, 0x020700, "mlx5_core", numa, cpus, "32.0", 16)
    d = f"sys/devices/pci{bdf[:7]}/{bdf}/"
    t[d + "vpd"] = vpd(management and lpf)
    port = d + f"infiniband/{ib}/ports/1/"
    t[port + "state"] = "4: ACTIVE\n"
    t[port + "link_layer"] = "InfiniBand\n"
    t[port + "cap_mask"] = (PORT_SM_DISABLED if management and not lpf else PORT_ACTIVE_SM) + "\n"
    t[f"sys/class/infiniband/{ib}"] = Link(f"../../devices/pci{bdf[:7]}/{bdf}/infiniband/{ib}")


def hgx_8xb200():
    """HGX B200 8-GPU (NVLink5): the H100 board's PCI layout with B200s in
    place of the H100s and no NVSwitch on the bus; the switches sit behind
    the ConnectX-7 management bridge at 0000:05:00.x. Driver 570.124.06
    (open), mlx5_ib and ib_umad loaded, NVLSM (pid 2290) and the fabric
    manager (pid 2301) running."""
    t = hgx_8xh100()
    for rel in [r for r in t if any(sw in r for sw in HGX_SWITCHES) or "nvswitch" in r]:
        del t[rel]
    for bdf, _minor, _numa, _cpus in HGX_GPUS:
        for rel in [r for r in t if r.endswith(f"/{bdf}/device")]:
            t[rel] = "0x2901\n"
        t[f"proc/driver/nvidia/gpus/{bdf}/information"] = information(
            "NVIDIA B200", hgx_uuid(bdf), bdf, _minor, 0, "97.00.88.00.0F", B200_DRIVER)
    t["proc/driver/nvidia/version"] = B200_VERSION
    for bdf, ib, lpf in B200_BRIDGE:
        ib_function(t, bdf, ib, lpf, True, 0, "0-55,112-167")
    ib_function(t, B200_NIC[0], B200_NIC[1], False, False, 0, "0-55,112-167")
    t["proc/modules"] = (
        "ib_umad 45056 4 - Live 0x0000000000000000\n"
        "mlx5_ib 483328 0 - Live 0x0000000000000000\n"
        "ib_core 462848 3 ib_umad,mlx5_ib,nvidia_peermem, Live 0x0000000000000000\n"
        "mlx5_core 2412544 1 mlx5_ib, Live 0x0000000000000000\n"
        "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia_modeset 1355776 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia_uvm 4956160 8 - Live 0x0000000000000000 (OE)\n"
        "nvidia 8650752 186 nvidia_peermem,nvidia_modeset,nvidia_uvm, "
        "Live 0x0000000000000000 (OE)\n" + OTHER_MODULES)
    t["proc/devices"] = t["proc/devices"].replace("508 nvidia-nvswitch\n", "")
    t["sys/class/infiniband_mad/abi_version"] = "5\n"
    t["opt/nvidia/nvlsm/sbin/nvlsm"] = ""
    process(t, 2290, "nvlsm", "/opt/nvidia/nvlsm/sbin/nvlsm\0--config\0"
            "/usr/share/nvidia/nvlsm/nvlsm.conf\0--guid\0" "0x0000000000000000\0")
    ws_libs(t, B200_DRIVER)
    fabric_manager_files(t, B200_DRIVER)
    t["dev/kmsg"] = kmsg(KMSG_BOOT + kmsg_driver(B200_LOADING))
    return t


def b200_no_mlx5_ib():
    """mlx5_ib not loaded: the bridge has no InfiniBand device, so the start
    script fell back to the pre-NVLink5 path and the fabric manager found no
    NVSwitch (NV_WARN_NOTHING_TO_DO, as on B200 in siderolabs/extensions#717)."""
    t = hgx_8xb200()
    for rel in [r for r in t if "/infiniband/" in r or r.startswith("sys/class/infiniband/")]:
        del t[rel]
    t["proc/modules"] = "".join(l + "\n" for l in t["proc/modules"].splitlines()
                                if not l.startswith("mlx5_ib "))
    stop_process(t, 2290)
    stop_process(t, 2301)
    t["var/log/fabricmanager.log"] = (
        "[Dec 02 2024 12:00:39] [ERROR] [tid 2318] request to query NVSwitch device information "
        "from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n")
    return t


def b200_no_umad():
    """ib_umad not loaded: NVLSM cannot open the umad nodes, so the start
    script gives up before the fabric manager starts (spectrocloud/CanvOS#700)."""
    t = hgx_8xb200()
    del t["sys/class/infiniband_mad/abi_version"]
    t["proc/modules"] = "".join(l + "\n" for l in t["proc/modules"].splitlines()
                                if not l.startswith("ib_umad "))
    stop_process(t, 2290)
    stop_process(t, 2301)
    del t["var/log/fabricmanager.log"]
    return t


def b200_no_nvlsm():
    """The nvlsm package missing (the fabric manager installed alone, not
    the nvlink5 meta package): nothing configures the NVLink switches."""
    t = hgx_8xb200()
    del t["opt/nvidia/nvlsm/sbin/nvlsm"]
    stop_process(t, 2290)
    return t


GB200_DRIVER = "570.124.06"
# GB200 NVL compute tray: two Grace CPUs, four GB200 GPUs, each on a PCI
# domain of its own; the NVLink switches are in the rack's switch trays.
GB200_GPUS = [("0008:01:00.0", 0, 0), ("0009:01:00.0", 1, 0), ("0018:01:00.0", 2, 1),
              ("0019:01:00.0", 3, 1)]  # bdf, minor, numa


def gb200_uuid(bdf):
    return f"GPU-9d1c37b0-5a1e-4b1f-8e7a-{bdf[:4]}0000{bdf[5:7]}00"


def gb200_tray(channel=False):
    """A GB200 NVL compute tray in a multi-node NVLink domain: nvidia-imex
    (pid 2410) runs with its node list, the driver registered
    nvidia-caps-imex-channels (major 242, as on the recorded H200), and no
    channel exists unless `channel`."""
    t = {}
    t["proc/meminfo"] = meminfo(905969664, 452984832, 41234567)
    t["proc/sys/vm/overcommit_memory"] = "0\n"
    t["proc/sys/vm/overcommit_ratio"] = "50\n"
    t["proc/1/cgroup"] = "0::/init.scope\n"
    process(t, 1, "systemd", "/sbin/init\0")
    t["proc/self/status"] = status(1000, 1000, [1000])
    t["proc/self/limits"] = limits()
    t["proc/cmdline"] = "BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-nvidia-64k root=/dev/nvme0n1p2 ro\n"
    iommu(t, {}, 0, "")
    cpus = {0: "0-71", 1: "72-143"}
    for bdf, minor, numa in GB200_GPUS:
        pci_function(t, bdf, 0x10de, 0x2941, 0x10de, 0x2046, 0x030200, "nvidia", numa, cpus[numa],
                     "32.0", 16)
        t[f"proc/driver/nvidia/gpus/{bdf}/information"] = information(
            "NVIDIA GB200", gb200_uuid(bdf), bdf, minor, 0, "97.00.8B.00.03", GB200_DRIVER)
        t[f"dev/nvidia{minor}"] = node(195, minor)
    version = B200_VERSION.replace("x86_64", "aarch64")
    t["proc/driver/nvidia/version"] = version
    t["proc/driver/nvidia/params"] = PARAMS.format(gsp=1)
    t["proc/modules"] = (
        "nvidia_uvm 4956160 8 - Live 0x0000000000000000 (OE)\n"
        "nvidia 8650752 186 nvidia_uvm, Live 0x0000000000000000 (OE)\n" + OTHER_MODULES)
    t["proc/devices"] = (DEVICES_HEAD + "195 nvidia\n195 nvidiactl\n236 nvidia-caps\n"
                         "242 nvidia-caps-imex-channels\n510 nvidia-uvm\n" + DEVICES_TAIL)
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "N\n"
    t["dev/null"] = node(1, 3)
    t["dev/nvidiactl"] = node(195, 255)
    t["dev/nvidia-uvm"] = node(510, 0)
    t["dev/nvidia-uvm-tools"] = node(510, 1)
    if channel:
        t["dev/nvidia-caps-imex-channels/channel0"] = node(242, 0)
    t["etc/nvidia-imex/nodes_config.cfg"] = "10.114.0.11\n10.114.0.12\n10.114.0.13\n"
    process(t, 2410, "nvidia-imex", "/usr/bin/nvidia-imex\0-c\0/etc/nvidia-imex/config.cfg\0")
    ws_libs(t, GB200_DRIVER)
    t["proc/uptime"] = "604800.50 90000000.00\n"
    t["proc/sys/kernel/dmesg_restrict"] = "1\n"
    t["dev/kmsg"] = kmsg(KMSG_BOOT + kmsg_driver(version.split("\n")[0].replace(
        "NVRM version: ", "")))
    return t


def hgx_fm_restarted():
    """Started at boot, stopped and started again hours later: two
    successful starts in this boot's log."""
    t = hgx_8xh100()
    t["var/log/fabricmanager.log"] = FM_STARTED + FM_STARTED.replace("12:00:41", "17:42:03")
    return t


# --- containers (on the ws-4x4090 host) ---------------------------------------------


# Docker's default /dev/shm (64 MiB) and the container's other mounts, as
# /proc/self/mounts shows them inside `docker run` (overlay root).
DOCKER_MOUNTS = (
    "overlay / overlay rw,relatime,lowerdir=/var/lib/docker/overlay2/l/A:/var/lib/docker/"
    "overlay2/l/B,upperdir=/var/lib/docker/overlay2/c/diff,workdir=/var/lib/docker/overlay2/c/work"
    " 0 0\n"
    "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
    "tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755,inode64 0 0\n"
    "devpts /dev/pts devpts rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=666 0 0\n"
    "sysfs /sys sysfs ro,nosuid,nodev,noexec,relatime 0 0\n"
    "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size={shm} 0 0\n")


def hybrid_cgroup(path):
    """/proc/self/cgroup of a process in `path` on a cgroup v1 (hybrid) host."""
    return "".join(f"{i}:{c}:{path}\n" for i, c in [
        (12, "devices"), (11, "memory"), (10, "pids"), (4, "cpu,cpuacct"),
        (1, "name=systemd")]) + f"0::{path}\n"


def container(with_gpus, devices_allowed=False, shm="65536k"):
    """A Docker container on the ws-4x4090 host: given GPUs or not; its
    device cgroup allowing the NVIDIA nodes (as --gpus sets it) or not."""
    t = {}
    t["proc/self/mounts"] = DOCKER_MOUNTS.format(shm=shm)
    t[".dockerenv"] = ""
    t["proc/meminfo"] = meminfo(131891232, 74334760, 23456788)
    t["proc/sys/vm/overcommit_memory"] = "0\n"
    t["proc/sys/vm/overcommit_ratio"] = "50\n"
    # cgroup v1 (hybrid): the device cgroup is readable from inside.
    cg = hybrid_cgroup(f"/docker/{CONTAINER_ID}")
    t["proc/self/cgroup"] = cg
    t["proc/1/cgroup"] = cg
    t["proc/self/status"] = status(0, 0, [0])
    t["proc/self/limits"] = limits()
    process(t, 1, "bash", "/bin/bash\0")
    process(t, 7, "python3", "python3\0train.py\0")
    # The container's own hierarchy is mounted at the top of each controller.
    t["sys/fs/cgroup/devices/devices.list"] = DOCKER_DEVICES_LIST + (
        "c 195:* rwm\nc 510:* rwm\n" if devices_allowed else "")
    t["sys/fs/cgroup/memory/memory.limit_in_bytes"] = "9223372036854771712\n"
    # The host's /proc and /sys show through: driver loaded, GPUs on the bus.
    ws_pci(t, "nvidia")
    ws_proc_driver(t)
    t["proc/modules"] = ws_modules()
    t["proc/devices"] = ws_devices()
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "N\n"
    t["dev/null"] = node(1, 3)
    if with_gpus:
        ws_devnodes(t)
        ws_libs(t)
    return t


def container_selinux():
    """A container on an SELinux host (enforcing), labelled container_t,
    given the GPUs: the nodes' mode bits allow it, but access(2) answered
    EACCES (the policy keeps container_t off xserver_misc_device_t)."""
    t = container(True, devices_allowed=True)
    t["sys/fs/selinux/enforce"] = "1\n"
    t["proc/self/attr/current"] = "system_u:system_r:container_t:s0:c380,c597\0"
    for k in [k for k in t if k.startswith("dev/nvidia")]:
        t[k] = t[k].rstrip("\n") + " refused=EACCES\n"
    return t


def container_rootless():
    """Rootless podman (a user namespace mapping root to uid 1000) on a host
    whose nodes are 0660 root:video: neither owner is mapped in, so the
    nodes show as 65534:65534 and root here has only their "other" bits."""
    t = container(True, devices_allowed=True)
    t["proc/self/uid_map"] = "         0       1000          1\n         1     100000      65536\n"
    for k in [k for k in t if k.startswith("dev/nvidia")]:
        t[k] = t[k].replace(" 0666 0:0", " 0660 65534:65534")
    return t


def podman_rootless():
    """container-rootless as rootless podman starts it: /run/.containerenv,
    no /.dockerenv (the case of NVIDIA/nvidia-container-toolkit#210, fixed
    by --group-add keep-groups with crun)."""
    t = container_rootless()
    del t[".dockerenv"]
    t["run/.containerenv"] = 'engine="podman-4.9.3"\nname="train"\nrootless=1\n'
    return t


def apptainer_no_nv():
    """`apptainer exec IMAGE` without --nv: /dev comes from the host, as
    Apptainer binds it by default, but the driver's libraries are not bound
    in, and Apptainer creates no cgroup of its own."""
    t = container(True, devices_allowed=True)
    del t[".dockerenv"]
    t[".singularity.d/runscript"] = "#!/bin/sh\nexec \"$@\"\n"
    t[".singularity.d/env/90-environment.sh"] = "#!/bin/sh\n"
    cg = "0::/user.slice/user-1000.slice/session-3.scope\n"
    t["proc/self/cgroup"] = cg
    t["proc/1/cgroup"] = "0::/init.scope\n"
    for k in [k for k in t if k.startswith("usr/lib/x86_64-linux-gnu/lib")]:
        del t[k]
    # The host's /dev/shm, bound with the rest of /dev.
    t["proc/self/mounts"] = (
        "overlay / overlay ro,nosuid,nodev,relatime 0 0\n"
        "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
        "tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0\n")
    return t


def container_ebpf_denied():
    """A container on a cgroup v2 host whose eBPF device filter no longer
    lists the GPU nodes (a systemctl daemon-reload rebuilt it): the rules
    cannot be read from inside, but access(2) answered EPERM."""
    t = container(True, devices_allowed=True)
    del t["sys/fs/cgroup/devices/devices.list"]
    cg = f"0::/system.slice/docker-{CONTAINER_ID}.scope\n"
    t["proc/self/cgroup"] = cg
    t["proc/1/cgroup"] = cg
    for k in [k for k in t if k.startswith("dev/nvidia")]:
        t[k] = t[k].rstrip("\n") + " refused=EPERM\n"
    return t


# --- garbage -------------------------------------------------------------------------


def garbage():
    t = {}
    junk = bytes(range(256)) * 2
    t["proc/driver/nvidia/version"] = b"\x00\xff\xfeNVRM\x01 garbage\n\x7f\x80" + junk
    t["proc/driver/nvidia/params"] = junk + b"\nGood_Name: 1\n: novalue\n"
    t["proc/driver/nvidia/gpus/0000:01:00.0/information"] = (
        b"Model: \xff\xfe\x00junk\nDevice Minor: 99999999999999999999999\nGPU UUID:\n" + junk)
    t["proc/modules"] = (junk + b"\nnvidia 56664064 notanumber - Live 0x0 (PO)\n"
                         b"nvidia_uvm 1896448 0 - Live 0x0000000000000000 (PO)\n"
                         b"nvidia_modeset\n")
    t["proc/devices"] = junk
    t["proc/meminfo"] = b"MemTotal: lots kB\nCommitLimit: \xff kB\n" + junk
    t["proc/sys/vm/overcommit_memory"] = "7\n"
    t["proc/sys/vm/overcommit_ratio"] = b"\xff\n"
    t["proc/self/cgroup"] = b"12:devices:/\n" + junk
    t["proc/self/status"] = b"Uid:\tx\n" + junk
    t["proc/self/limits"] = b"Max address space  lots\n" + junk
    t["proc/1/cgroup"] = b"\x00\x00"
    t["proc/123/comm"] = junk
    t["proc/124/comm"] = b""
    t["proc/abc/comm"] = "nvidia-persistenced\n"
    process(t, 2301, "nv-fabricmanager", "\xff")
    t["proc/2302/comm"] = "nvidia-cuda-mps\n"
    t["proc/2302/cmdline"] = junk
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "maybe\n"
    for bdf in ["0000:01:00.0", "0000:02:00.0", "0000:03:00.0"]:
        t[f"sys/bus/pci/devices/{bdf}"] = Link(f"../../../devices/pci0000:{bdf[5:7]}/{bdf}")
    d = "sys/devices/pci0000:01/0000:01:00.0/"
    t[d + "vendor"] = "0x10de\n"
    t[d + "device"] = "0xZZZZ\n"
    t[d + "subsystem_vendor"] = b"\x00\x01\x02"
    t[d + "subsystem_device"] = "0x1234567890\n"
    t[d + "class"] = b"\x00\x01"
    t[d + "numa_node"] = "x\n"
    t[d + "local_cpulist"] = b"\x01\x02\xff\n"
    t[d + "current_link_speed"] = "Unknown\n"
    t[d + "max_link_speed"] = "garbage GT/s\n"
    t[d + "current_link_width"] = "sixteen\n"
    t[d + "max_link_width"] = "-4\n"
    t[d + "driver"] = Link("../../../bus/pci/drivers/nvidia")
    t["sys/devices/pci0000:02/0000:02:00.0/vendor"] = junk
    t["sys/devices/pci0000:03/0000:03:00.0/vendor"] = "0x10de\n"  # nothing else there
    # The IOMMU: a group of an unknown type, a group that is no number, and
    # a binary kernel command line.
    t["sys/kernel/iommu_groups/0/type"] = junk
    t["sys/kernel/iommu_groups/x/type"] = "identity\n"
    t["proc/cmdline"] = junk + b" iommu=pt,\xff iommu.passthrough=maybe amd_iommu=\n"
    t["dev/nvidiactl"] = b"\xff\xfe\x00"
    t["dev/nvidia0"] = "char banana 0666 0:0\n"
    t["dev/nvidia1"] = "char 195:1 9999 0:0\n"
    t["dev/nvidia99999999999999999999"] = "char 195:2 0666 0:0\n"
    t["dev/nvidia-uvm"] = node(510, 0)
    t["dev/nvidia-caps/nvidia-cap1"] = ""
    t["sys/fs/cgroup/devices/devices.list"] = junk
    t["usr/lib/x86_64-linux-gnu/libcuda.so.abc"] = ""
    t["usr/lib/x86_64-linux-gnu/libcuda.so.1.2.x"] = ""
    t["usr/bin/nv-fabricmanager"] = ""
    t["var/lib/dpkg/status"] = junk + b"\nPackage: nvidia-fabricmanager-550\nVersion:"
    t["proc/uptime"] = b"\xff lots\n"
    t["proc/sys/kernel/dmesg_restrict"] = "2\n"
    t["dev/kmsg"] = (junk + b"\n4,x,y,-;NVRM: Xid (PCI:0000:01:00): 79\n"
                     b"4,1,99999999999999999999999,-;NVRM: Xid (PCI:zz): 999999999999, \xff\n"
                     b"6,2,3;no flags\n;\n,,,;\n \n SUBSYSTEM=pci\n")
    return t


def garbage_pci():
    """A broken PCI tree: a bridge whose extended capability list loops
    (0x100 -> 0x140 -> 0x100), one whose config space is cut off inside the
    list, one whose config space is the 64 bytes a user may read, and a
    function whose link leads out of any root bus."""
    t = {}
    loop = bytearray(4096)
    struct.pack_into("<I", loop, 0x100, 0x0001 | (1 << 16) | (0x140 << 20))
    struct.pack_into("<I", loop, 0x140, 0x0019 | (1 << 16) | (0x100 << 20))
    cut = bytes(loop[:0x142])
    for i, (bridge, config) in enumerate([("0000:00:01.0", bytes(loop)), ("0000:00:02.0", cut)]):
        gpu = f"0000:0{4 + i}:00.0"
        rel = f"pci0000:00/{bridge}"
        t[f"sys/bus/pci/devices/{bridge}"] = Link(f"../../../devices/{rel}")
        t[f"sys/bus/pci/devices/{gpu}"] = Link(f"../../../devices/{rel}/{gpu}")
        t[f"sys/devices/{rel}/vendor"] = "0x1022\n"
        t[f"sys/devices/{rel}/config"] = config
        t[f"sys/devices/{rel}/{gpu}/vendor"] = "0x10de\n"
        t[f"sys/devices/{rel}/{gpu}/class"] = "0x030000\n"
    t["sys/bus/pci/devices/0000:06:00.0"] = Link("../../../devices/platform/0000:06:00.0")
    t["sys/devices/platform/0000:06:00.0/vendor"] = "0x10de\n"
    t["sys/devices/pci0000:00/0000:00:01.0/numa_node"] = "x\n"
    t["sys/devices/pci0000:00/0000:00:02.0/max_link_width"] = "-4\n"
    user = bytearray(64)
    struct.pack_into("<HH", user, 0, 0x1022, 0x1483)
    t["sys/bus/pci/devices/0000:00:03.0"] = Link("../../../devices/pci0000:00/0000:00:03.0")
    t["sys/bus/pci/devices/0000:07:00.0"] = Link(
        "../../../devices/pci0000:00/0000:00:03.0/0000:07:00.0")
    t["sys/devices/pci0000:00/0000:00:03.0/config"] = bytes(user)
    t["sys/devices/pci0000:00/0000:00:03.0/0000:07:00.0/vendor"] = "0x10de\n"
    t["sys/devices/pci0000:00/0000:00:03.0/0000:07:00.0/class"] = "0x030200\n"
    return t


def ws_driver535():
    """ws-4x4090 with an older kernel module (535.54.03, CUDA 12.2): a CUDA 13
    runtime needs a newer driver."""
    old, new = "550.54.14", "535.54.03"
    t = {}
    for rel, content in ws_4x4090().items():
        if isinstance(content, Link):
            content = Link(content.target.replace(old, new))
        elif isinstance(content, str):
            content = content.replace(old, new)
        t[rel.replace(old, new)] = content
    return t


# --- the real H200 VM (../shared/recorded/h200-vm-580.159.04) ---------------------------
# What the record shows of it (device-check/snapshot.json, machine.txt, dmesg,
# smi-q.txt), in the kernel's formats. Kernel 6.18 without CONFIG_MODULE_UNLOAD:
# /proc/modules prints "-" for refcount and users, and /sys/module/<name> has
# initstate but no refcnt. The nvidia_uvm line is the record's (README.md).
# What the record does not keep is a stand-in in the same form, marked "~":
# the nvidia line's size and address, the GCC line, the kernel command line.

H200_BDF = "0000:00:06.0"
H200_UUID = "GPU-45e11636-eca6-4b14-c5ee-af9440ab3d3d"
H200_VERSION = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
                "Release Build  (nixbld@)  \n"
                "GCC version:  gcc version 14.3.0 (GCC) \n")  # ~ GCC line
H200_LOADING = "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  "
H200_MODULES = ("nvidia_uvm 1875968 - - Live 0xffffffffc080c000 (O)\n"
                "nvidia 14733312 - - Live 0xffffffffc0000000 (O)\n")  # ~ size, address
H200_CGROUP = "/process_api/81ac14abb52ee76b76ab61d91f9884a1"


def h200_params():
    """The record's /proc/driver/nvidia/params values, in the driver's order."""
    return (PARAMS.format(gsp=18).replace("NvLinkDisable: 0", "NvLinkDisable: 1")
            .replace("RmProfilingAdminOnly: 1", "RmProfilingAdminOnly: 0"))


def h200_vm():
    """1 x H200 in a Firecracker VM (no IOMMU, numa_node -1, the GPU straight
    on the root bus, no bridge), gpudoctor run as root in a Docker container
    (cgroup v2, 128 GiB memory.max), driver libraries in /usr/local/nvidia."""
    t = {}
    t[".dockerenv"] = ""
    # MemTotal 135129063424 B, CommitLimit 67564531712 B, Committed_AS 81195008 B
    t["proc/meminfo"] = meminfo(131961976, 65980988, 79292)
    t["proc/sys/vm/overcommit_memory"] = "1\n"
    t["proc/sys/vm/overcommit_ratio"] = "50\n"
    v2_cgroup(t, H200_CGROUP, {H200_CGROUP: str(128 << 30)})
    t["proc/1/cgroup"] = f"0::{H200_CGROUP}\n"
    t["proc/self/status"] = status(0, 0, [0])
    t["proc/self/limits"] = limits()
    process(t, 1, "bash", "/bin/bash\0")
    for pid, comm in [(160, "nv_queue"), (161, "nv_queue"), (162, "nv_open_q"), (188, "nvidia"),
                      (189, "nv_queue")]:
        t[f"proc/{pid}/comm"] = comm + "\n"
    pci_function(t, H200_BDF, 0x10de, 0x2335, 0x10de, 0x18bf, 0x030200, "nvidia", -1, "0-15",
                 "32.0", 16)
    iommu(t, {}, 0, "")
    # ~ a Firecracker guest's command line; the record has no IOMMU flag in it
    t["proc/cmdline"] = ("console=ttyS0 reboot=k panic=1 pci=realloc root=/dev/vda rw "
                         "init=/sbin/init\n")
    t["proc/driver/nvidia/version"] = H200_VERSION
    t["proc/driver/nvidia/params"] = h200_params()
    t[f"proc/driver/nvidia/gpus/{H200_BDF}/information"] = information(
        "NVIDIA H200", H200_UUID, H200_BDF, 0, 0, "96.00.a5.00.1a", "580.159.04")
    t["proc/modules"] = H200_MODULES
    t["proc/devices"] = (DEVICES_HEAD + "195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n"
                         "239 nvidia-nvswitch\n240 nvidia-nvlink\n241 nvidia-caps\n"
                         "242 nvidia-caps-imex-channels\n" + DEVICES_TAIL.replace("239 nvme\n", ""))
    t["sys/module/nvidia_uvm/parameters/uvm_disable_hmm"] = "N\n"
    t["sys/module/nvidia_uvm/initstate"] = "live\n"
    t["sys/module/nvidia/initstate"] = "live\n"
    t["dev/null"] = node(1, 3)
    t["dev/nvidiactl"] = node(195, 255)
    t["dev/nvidia0"] = node(195, 0)
    t["dev/nvidia-uvm"] = node(238, 0)
    t["dev/nvidia-uvm-tools"] = node(238, 1)
    t["dev/nvidia-caps/nvidia-cap1"] = node(241, 1, "0400")
    t["dev/nvidia-caps/nvidia-cap2"] = node(241, 2, "0444")
    for d in ["usr/local/nvidia/lib64/", "usr/local/nvidia/lib/"]:
        t[d + "libcuda.so.580.159.04"] = ""
        t[d + "libcuda.so.1"] = Link("libcuda.so.580.159.04")
        t[d + "libnvidia-ml.so.580.159.04"] = ""
        t[d + "libnvidia-ml.so.1"] = Link("libnvidia-ml.so.580.159.04")
    t["proc/uptime"] = "61.43 950.12\n"
    t["proc/sys/kernel/dmesg_restrict"] = "1\n"
    t["dev/kmsg"] = kmsg([
        (5, 0, "Linux version 6.18.44-fc-v1252-gpu (nixbld@localhost) #1 SMP PREEMPT_DYNAMIC", []),
        (4, 512120, "nvidia: loading out-of-tree module taints kernel.", []),
        (6, 624246, "nvidia-nvlink: Nvlink Core is being initialized, major device number 240",
         []),
        (5, 624259, "NVRM: loading " + H200_LOADING, []),
        (4, 3512049, "NVRM: Persistence mode is deprecated and will be removed in a future "
         "release. Please use nvidia-persistenced instead.", [])])
    return t


def ws_permanent():
    """ws-4x4090 whose nvidia modules show "[permanent]," in the users column,
    as the kernel prints a module with an init but no exit function
    (kernel/module/procfs.c print_unload_info): it can never be unloaded."""
    t = ws_4x4090()
    t["proc/modules"] = (
        "nvidia_drm 122880 4 [permanent], Live 0x0000000000000000 (POE)\n"
        "nvidia_modeset 1355776 6 nvidia_drm,[permanent], Live 0x0000000000000000 (POE)\n"
        "nvidia_uvm 4956160 0 [permanent], Live 0x0000000000000000 (POE)\n"
        "nvidia 54206464 20 nvidia_uvm,nvidia_modeset,[permanent], Live "
        "0x0000000000000000 (POE)\n" + OTHER_MODULES)
    return t


def ws_builtin():
    """ws-4x4090 on a kernel with nvidia and nvidia_uvm built in: they are
    not in /proc/modules (only loadable modules are), only under /sys/module
    (parameters, no initstate); nvidia_modeset and nvidia_drm are loadable."""
    t = ws_4x4090()
    t["proc/modules"] = (
        "nvidia_drm 122880 4 - Live 0x0000000000000000 (POE)\n"
        "nvidia_modeset 1355776 6 nvidia_drm, Live 0x0000000000000000 (POE)\n" + OTHER_MODULES)
    t["sys/module/nvidia/parameters/NVreg_DeviceFileMode"] = "438\n"
    t["sys/module/nvidia/version"] = "550.54.14\n"
    t["sys/module/nvidia_modeset/initstate"] = "live\n"
    t["sys/module/nvidia_modeset/refcnt"] = "6\n"
    return t


def empty():
    """A machine with no NVIDIA GPU and no NVIDIA driver, like a CI runner."""
    return {
        "proc/modules": ("virtio_net 61440 0 - Live 0x0000000000000000\n"
                         "ext4 933888 1 - Live 0x0000000000000000\n"),
        "sys/bus/pci/devices/.keep": "",
    }


# --- WSL (docs/nvidia-facts.md §13) ---------------------------------------------------

WSL_LIBS = ("libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1", "nvidia-smi",
            "libdxcore.so")


def wsl_base(release):
    """A WSL guest: no PCI GPU, no NVIDIA module or /dev/nvidia* (the Windows
    driver serves the GPU), Microsoft's kernel."""
    t = {}
    ws_base(t)
    t["proc/modules"] = OTHER_MODULES
    t["proc/devices"] = DEVICES_HEAD + DEVICES_TAIL
    t["dev/null"] = node(1, 3)
    t["proc/sys/kernel/osrelease"] = release + "\n"
    return t


def wsl2(libs=True):
    """WSL 2 with GPU paravirtualization (/dev/dxg; the node's numbers are
    illustrative, the probe only asks whether it exists) and, with libs, the
    Windows driver's libraries in /usr/lib/wsl/lib on the loader's path."""
    t = wsl_base("5.15.153.1-microsoft-standard-WSL2")
    t["dev/dxg"] = node(10, 125)
    if libs:
        for name in WSL_LIBS:
            t["usr/lib/wsl/lib/" + name] = "a file the Windows driver maps in\n"
        t["etc/ld.so.conf.d/ld.wsl.conf"] = "/usr/lib/wsl/lib\n"
    else:
        t["etc/ld.so.conf.d/libc.conf"] = "/usr/local/lib\n"
    return t


def wsl1():
    """WSL 1: a translation layer with a fixed kernel string and no GPU."""
    return wsl_base("4.4.0-19041-Microsoft")


TREES = {
    "ws-4x4090-driver535": ws_driver535,
    "empty": empty,
    "ws-4x4090": ws_4x4090,
    "ws-4x4090-container-host": ws_container_host,
    "ws-4x4090-hidepid": ws_hidepid,
    "ws-4x4090-cdi-stale": ws_cdi_stale,
    "ws-4x4090-no-cgroups": ws_no_cgroups,
    "hgx-8xh100": hgx_8xh100,
    "no-driver": no_driver,
    "nouveau": nouveau,
    "ws-4x4090-new-kernel": new_kernel,
    "ws-4x4090-no-uvm": ws_no_uvm,
    "ws-4x4090-no-devnodes": ws_no_devnodes,
    "ws-4x4090-ulimit": ws_ulimit,
    "ws-4x4090-devnode-perms": ws_devnode_perms,
    "ws-4x4090-xid79": ws_xid79,
    "ws-4x4090-x4": ws_x4,
    "ws-4x4090-acs": ws_acs,
    "hgx-8xh100-no-fm": hgx_no_fm,
    "hgx-8xh100-switch-lost": hgx_switch_lost,
    "hgx-8xh100-fm-missing": hgx_fm_missing,
    "hgx-8xh100-fm-mismatch": hgx_fm_mismatch,
    "hgx-8xh100-fm-restarted": hgx_fm_restarted,
    "hgx-8xb200": hgx_8xb200,
    "hgx-8xb200-no-mlx5-ib": b200_no_mlx5_ib,
    "hgx-8xb200-no-umad": b200_no_umad,
    "hgx-8xb200-no-nvlsm": b200_no_nvlsm,
    "gb200-tray": lambda: gb200_tray(channel=True),
    "gb200-tray-no-imex-channel": gb200_tray,
    "container-no-gpus": lambda: container(False),
    "container-denied": lambda: container(True),
    "container-gpus": lambda: container(True, devices_allowed=True),
    "garbage": garbage,
    "garbage-pci": garbage_pci,
    "h200-vm": h200_vm,
    "ws-4x4090-permanent": ws_permanent,
    "ws-4x4090-builtin": ws_builtin,
    "wsl2": wsl2,
    "wsl2-no-libs": lambda: wsl2(libs=False),
    "wsl1": wsl1,
    "container-selinux": container_selinux,
    "container-rootless": container_rootless,
    "podman-rootless": podman_rootless,
    "apptainer-no-nv": apptainer_no_nv,
    "k8s-pod-no-gpus": lambda: as_pod(container(False)),
    "container-hami": lambda: container_hami(True),
    "container-hami-missing": lambda: container_hami(False),
    "container-ebpf-denied": container_ebpf_denied,
}


def write_tree(name, tree):
    top = os.path.join(HERE, name)
    if os.path.lexists(top):
        shutil.rmtree(top)
    for rel, content in sorted(tree.items()):
        path = os.path.join(top, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, Link):
            os.symlink(content.target, path)
            continue
        data = content.encode("latin-1") if isinstance(content, str) else content
        with open(path, "wb") as f:
            f.write(data)


def differs(name, tree):
    """The first difference between the tree on disk and the generated one."""
    top = os.path.join(HERE, name)
    on_disk = set()
    for dirpath, dirnames, filenames in os.walk(top):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            on_disk.add(os.path.relpath(os.path.join(dirpath, n), top))
    if on_disk != set(tree):
        return f"{name}: files differ: {sorted(on_disk ^ set(tree))[:5]}"
    for rel, content in tree.items():
        path = os.path.join(top, rel)
        if isinstance(content, Link):
            if not os.path.islink(path) or os.readlink(path) != content.target:
                return f"{name}/{rel}: link differs"
            continue
        data = content.encode("latin-1") if isinstance(content, str) else content
        with open(path, "rb") as f:
            if f.read() != data:
                return f"{name}/{rel}: content differs"
    return None


def main():
    check = "--check" in sys.argv[1:]
    bad = False
    for name, make in TREES.items():
        tree = make()
        if check:
            diff = differs(name, tree)
            if diff:
                print(diff, file=sys.stderr)
                bad = True
        else:
            write_tree(name, tree)
    if check and bad:
        print("trees are stale: run tests/roots/make_roots.py", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
