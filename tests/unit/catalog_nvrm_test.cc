// Tests of the kernel-log pattern table (catalog/nvrm.h): the real lines of
// docs/nvidia-facts.md §2, §2.2 (and the kernel/kmod formats
// cited in nvrm.cc) match the right kind/type/finding; unrelated lines match
// nothing; the RmInitAdapter decode tables.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "catalog/nvrm.h"

namespace gd {
namespace {

struct Case {
  const char* line;
  const char* kind;
  const char* type;
  const char* finding;
};

const Case kMatches[] = {
    // nvidia.ko banners: open, proprietary, Jetson (facts §2).
    {"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build  "
     "(dvs-builder@U16-I3-B03-4-3)  Thu Oct 30 00:00:00 UTC 2025",
     "nvrm", "loaded", ""},
    {"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
     "nvrm", "loaded", ""},
    {"NVRM: loading NVIDIA UNIX Kernel Module for aarch64  34.1.1  Release Build", "nvrm", "loaded",
     ""},
    // API mismatch, first line (the rest are continuations).
    {"NVRM: API mismatch: the client 'nvidia-smi' (pid 2231)", "nvrm", "api-mismatch",
     "driver.library-mismatch"},
    {"NVRM: API mismatch: the client 'python3' (pid 88213) NVRM: has the version 550.54.15, but "
     "this kernel module has NVRM: the version 535.104.05.  Please make sure that this",
     "nvrm", "api-mismatch", "driver.library-mismatch"},
    {"NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x40:2168)", "nvrm", "rm-init-failed",
     "driver.module-load-failed"},
    {"NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x65:1792)", "nvrm", "rm-init-failed",
     "driver.module-load-failed"},
    {"NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0", "nvrm",
     "rm-init-failed", "driver.module-load-failed"},
    {"NVRM: GPU0 RmInitAdapter: Cannot initialize GSP firmware RM", "nvrm", "gsp-init-failed",
     "driver.module-load-failed"},
    {"NVRM: _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP", "nvrm",
     "gsp-wpr2-up", "gpu.reset-required"},
    {"NVRM: The NVIDIA probe routine was not called for 1 device(s).", "nvrm", "probe-not-called",
     "driver.nouveau"},
    {"NVRM: The NVIDIA probe routine failed for 2 device(s).", "nvrm", "probe-failed",
     "driver.module-load-failed"},
    {"NVRM: No NVIDIA devices probed.", "nvrm", "no-devices", "driver.module-load-failed"},
    {"NVRM: None of the NVIDIA devices were initialized.", "nvrm", "no-devices",
     "driver.module-load-failed"},
    {"NVRM: No NVIDIA GPU found.", "nvrm", "no-devices", "driver.module-load-failed"},
    // "not supported": one line of the message, or the message joined.
    {"NVRM: installed in this system is not supported by the", "nvrm", "gpu-unsupported",
     "driver.gpu-unsupported"},
    {"NVRM: The NVIDIA GPU 0000:04:00.0 (PCI ID: 10de:1024)\nNVRM: installed in this system is "
     "not supported by the\nNVRM: NVIDIA 535.54.03 driver release.",
     "nvrm", "gpu-unsupported", "driver.gpu-unsupported"},
    {"NVRM: installed in this system is not supported by open", "nvrm", "open-module-unsupported",
     "driver.gpu-unsupported"},
    // GPU lost, non-Xid forms.
    {"NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.", "nvrm", "fallen-off-bus",
     "gpu.fallen-off-bus"},
    {"NVRM: fallen off the bus and is not responding to commands.", "nvrm", "fallen-off-bus",
     "gpu.fallen-off-bus"},
    {"NVRM: The NVIDIA GPU 0000:05:00.0 NVRM: (PCI ID: 10de:2330) installed in this system has "
     "NVRM: fallen off the bus and is not responding to commands.",
     "nvrm", "fallen-off-bus", "gpu.fallen-off-bus"},
    {"NVRM: GPU is lost, skipping nvidia_ioctl", "nvrm", "fallen-off-bus", "gpu.fallen-off-bus"},
    // Module loader (Linux kernel/module) and modprobe (kmod).
    {"nvidia: Unknown symbol drm_gem_object_free (err -2)", "nvrm", "unknown-symbol",
     "driver.module-load-failed"},
    {"nvidia: disagrees about version of symbol module_layout", "nvrm", "unknown-symbol",
     "driver.module-load-failed"},
    {"modprobe: ERROR: could not insert 'nvidia': Unknown symbol in module, or unknown parameter "
     "(see dmesg)",
     "nvrm", "unknown-symbol", "driver.module-load-failed"},
    {"nvidia-uvm: Loaded the UVM driver, major device number 510.", "uvm", "loaded", ""},
    {"nvidia_uvm: Unknown symbol nvUvmInterfaceRegisterGpu (err -2)", "uvm", "unknown-symbol",
     "uvm.missing"},
    {"nvidia_uvm: disagrees about version of symbol nvUvmInterfaceRegisterGpu", "uvm",
     "unknown-symbol", "uvm.missing"},
    {"nvidia-nvswitch3: open (major=508)", "nvswitch", "opened", ""},
    // Secure Boot.
    {"Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
     "module-signature", "rejected", "driver.module-load-failed"},
    {"modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "module-signature",
     "rejected", "driver.module-load-failed"},
    {"nvidia: module verification failed: signature and/or required key missing - tainting "
     "kernel",
     "module-signature", "unsigned-tainted", ""},
    {"nvidia_uvm: module verification failed: signature and/or required key missing - tainting "
     "kernel",
     "module-signature", "unsigned-tainted", ""},
    {"nouveau 0000:01:00.0: bios: version 86.04.50.00.01", "nouveau", "bound", "driver.nouveau"},
    // Fabric manager fragments (facts §2.2), with FM's own prefix.
    {"[Dec 02 2026 10:00:01] [ERROR] [tid 1234] request to query NVSwitch device information "
     "from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
     "fabric-manager", "no-nvswitch", ""},
    {"Detected Pre-NVL5 system", "fabric-manager", "pre-nvl5", ""},
    {"[ERROR] [tid 99] detected NVSwitch fatal error 12028 on fid 0 on NVSwitch pci bus id "
     "00000000:05:00.0",
     "fabric-manager", "nvswitch-fatal", ""},
    {"detected NVSwitch non-fatal error 10001 on fid 0", "fabric-manager", "nvswitch-non-fatal",
     ""},
    {"[ERROR] [tid 7] detected number of NVSwitches don't match with any supported system "
     "topology, aborting fabric manager",
     "fabric-manager", "topology-mismatch", "fabric.switch-missing"},
    // NVIDIA/gpu-operator#544
    {"nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 "
     "don't match with driver version 530.41.03. Please update with matching NVIDIA driver "
     "package.",
     "fabric-manager", "version-mismatch", "fabric-manager.version-mismatch"},
    // NVIDIA/nvtrust#128
    {"Jan 05 14:45:28 TENCENT64 nv-fabricmanager[1120]: Successfully configured all the "
     "available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be "
     "enabled once the GPUs are successfully registered with the NVLink fabric.",
     "fabric-manager", "configured", ""},
    {"Jan 05 15:32:16 TENCENT64 nvidia-fabricmanager-start.sh[20411]: Stopped \"Nvidia Fabric "
     "Manager\"",
     "fabric-manager", "stopped", "fabric-manager.restarted-without-reset"},
    // NVIDIA/gpu-operator#544
    {"nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
     "fabric-manager", "unit-failed", ""},
    // spectrocloud/CanvOS#700 (an HGX B200), siderolabs/docs#581
    {"Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be started",
     "fabric-manager", "ib-umad-missing", "fabric.ib-modules-missing"},
    {"nvlsm: ibwarn: [15] umad_init: can't read ABI version from "
     "/sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module "
     "loaded?",
     "fabric-manager", "umad-init-failed", "fabric.ib-modules-missing"},
    {"failed to find the GPU handle 5 in the multicast team", "fabric-manager", "multicast-failed",
     ""},
};

TEST(LogPatterns, RealLinesMatch) {
  for (const Case& c : kMatches) {
    SCOPED_TRACE(c.line);
    const LogPattern* p = match_log_pattern(c.line);
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(p->kind, c.kind);
    EXPECT_STREQ(p->type, c.type);
    EXPECT_STREQ(p->finding, c.finding);
  }
}

TEST(LogPatterns, NoiseMatchesNothing) {
  const std::vector<std::string> noise = {
      "",
      "NVRM: GPU at PCI:0000:01:00: GPU-8f6b4a2c-1d3e-4b5f-9a7c-0e1d2c3b4a59",
      "NVRM: GPU Board Serial Number: 1652321012345",
      "NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ESR 0x405840=0xa0040800",
      "nvidia-nvlink: Nvlink Core is being initialized, major device number 237",
      "nvidia: loading out-of-tree module taints kernel.",
      "nvidia: module license 'NVIDIA' taints kernel.",
      "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
      "e1000e 0000:00:1f.6 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None",
      "usb 1-1: new high-speed USB device number 2 using xhci_hcd",
      "Lockdown: systemd: /dev/mem,kmem,port is restricted; see man kernel_lockdown.7",
      "modprobe: ERROR: could not insert 'vboxdrv': Key was rejected by service",
      "ext4: Unknown symbol foo (err -2)",
      "kernel: GPU has fallen off the bus.",  // not an NVRM line
      "  NVRM: No NVIDIA GPU found.",         // prefix must be at the start
      std::string("NVRM: \0\xff\xfe garbage", 17),
      std::string(4096, 'x'),
  };
  for (const std::string& line : noise) {
    const LogPattern* p = match_log_pattern(line);
    EXPECT_EQ(p, nullptr) << "'" << line << "' matched " << (p ? p->type : "");
  }
}

TEST(LogPatterns, TableIsWellFormed) {
  const std::set<std::string> kinds = {"nvrm",    "uvm",     "nvswitch",       "nvlink",
                                       "peermem", "nouveau", "fabric-manager", "module-signature"};
  ASSERT_FALSE(log_patterns().empty());
  for (const LogPattern& p : log_patterns()) {
    ASSERT_NE(p.kind, nullptr);
    ASSERT_NE(p.type, nullptr);
    ASSERT_NE(p.prefix, nullptr);
    ASSERT_NE(p.needle, nullptr);
    ASSERT_NE(p.meaning, nullptr);
    ASSERT_NE(p.finding, nullptr);
    SCOPED_TRACE(std::string(p.kind) + "/" + p.type + ": " + p.needle);
    EXPECT_TRUE(kinds.count(p.kind)) << p.kind;
    EXPECT_NE(std::string(p.type), "");
    EXPECT_NE(std::string(p.meaning), "");
    // Every finding is a catalog id.
    if (*p.finding != '\0') {
      EXPECT_NE(find_catalog_entry(p.finding), nullptr) << p.finding;
    }
  }
}

// Order: no pattern is hidden behind an earlier, broader one.
TEST(LogPatterns, NoPatternIsShadowed) {
  for (const LogPattern& p : log_patterns()) {
    std::string message = std::string(p.prefix) + p.needle;
    EXPECT_EQ(match_log_pattern(message), &p) << message;
  }
}

TEST(RmInitDecode, StageNames) {
  EXPECT_STREQ(rm_init_stage_name(0x62), "RM_INIT_FIRMWARE_INIT_FAILED");
  EXPECT_STREQ(rm_init_stage_name(0x25), "RM_INIT_GPU_LOAD_FAILED");
  EXPECT_STREQ(rm_init_stage_name(0x10), "RM_INIT_REG_SETUP_FAILED");
  EXPECT_STREQ(rm_init_stage_name(0x32), "RM_INIT_VBIOS_X86EMU_FAILED");
  EXPECT_STREQ(rm_init_stage_name(0x45), "RM_INIT_GPUINFO_WITH_RMAPI_FAILED");
  EXPECT_EQ(rm_init_stage_name(0), nullptr);
  EXPECT_EQ(rm_init_stage_name(0x12), nullptr);
  EXPECT_EQ(rm_init_stage_name(-1), nullptr);
}

TEST(RmInitDecode, StatusNames) {
  EXPECT_STREQ(nv_status_name(0x40), "NV_ERR_INVALID_STATE");
  EXPECT_STREQ(nv_status_name(0x65), "NV_ERR_TIMEOUT");
  EXPECT_STREQ(nv_status_name(0x0F), "NV_ERR_GPU_IS_LOST");
  EXPECT_STREQ(nv_status_name(0x62), "NV_ERR_RESET_REQUIRED");
  EXPECT_STREQ(nv_status_name(0xFFFF), "NV_ERR_GENERIC");
  EXPECT_EQ(nv_status_name(0), nullptr);
  EXPECT_EQ(nv_status_name(0x10000), nullptr);
}

}  // namespace
}  // namespace gd
