// Kernel-log patterns other than Xid/SXid/AER (the decoder handles those
// itself and must try them first: an Xid 79 line also contains "fallen off
// the bus"). Transcribed 2026-12 from docs/nvidia-facts.md §2,
// §2.1 and §2.2, whose sources are NVIDIA/open-gpu-kernel-modules 595.45.04
// (kernel-open/nvidia/nv.c, src/nvidia/arch/nvalloc/unix/src/osapi.c and
// osinit.c, kernel-open/nvidia-uvm/uvm.c, kernel-open/nvidia/
// linux_nvswitch.c), Linux (lockdown, module signing), and fabric-manager
// messages seen in public issues and gpud's matchers. Where a line is not in
// the facts, the comment above its pattern names the public source.
//
// Real lines, one per pattern family (messages have their time prefix
// stripped; multi-line messages may arrive one line at a time or joined, so
// every needle sits inside one printed line):
//   NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build
//   (dvs-builder@...) NVRM: API mismatch: the client 'nvidia-smi' (pid 1234) NVRM: GPU
//   0000:01:00.0: RmInitAdapter failed! (0x62:0x40:2168) NVRM: GPU0 RmInitAdapter: Cannot
//   initialize GSP firmware RM NVRM: The NVIDIA probe routine was not called for 1 device(s). NVRM:
//   installed in this system is not supported by the NVRM: GPU 0000:01:00.0: GPU has fallen off the
//   bus. nvidia-uvm: Loaded the UVM driver, major device number 510. Lockdown: modprobe: unsigned
//   module loading is restricted; see man kernel_lockdown.7 nvidia: module verification failed:
//   signature and/or required key missing - tainting kernel nouveau 0000:01:00.0: DRM: ... [ERROR]
//   [tid 1234] detected number of NVSwitches don't match with any supported system topology
#include "catalog/nvrm.h"

#include <algorithm>
#include <functional>

namespace gd {
namespace {

// clang-format off
const std::vector<LogPattern> kPatterns = {
  // --- nvidia.ko (kind "nvrm"); more specific needles first. ---
  {"nvrm", "loaded", "NVRM: ", "loading NVIDIA UNIX",
   "the NVIDIA kernel module loaded (the banner names its version)", ""},
  {"nvrm", "api-mismatch", "NVRM: ", "API mismatch",
   "a user-space driver library's version differs from the loaded kernel module's",
   "driver.library-mismatch"},
  {"nvrm", "gsp-init-failed", "NVRM: ", "Cannot initialize GSP firmware RM",
   "the GSP firmware failed to boot on this GPU", "driver.module-load-failed"},
  // facts §2: printed with the GSP failure; the GPU is in a bad state.
  {"nvrm", "gsp-wpr2-up", "NVRM: ", "unexpected WPR2 already up",
   "GSP boot found the GPU still set up from before: the GPU needs a reset",
   "gpu.reset-required"},
  {"nvrm", "rm-init-failed", "NVRM: ", "RmInitAdapter failed!",
   "the driver could not initialize the GPU", "driver.module-load-failed"},
  {"nvrm", "rm-init-failed", "NVRM: ", "rm_init_adapter failed",
   "the driver could not initialize the GPU when it was opened", "driver.module-load-failed"},
  // "NVRM: GPU 0000:01:00.0 is already bound to NovaCore." (driver 580 on
  // Linux 7.0 with nova_core, nouveau's successor, built in:
  // https://github.com/beclab/Olares/pull/3963). Another driver owns the GPU.
  {"nvrm", "bound-elsewhere", "NVRM: ", "is already bound to",
   "another kernel driver (nouveau, nova_core, vfio-pci) owns the GPU", "driver.nouveau"},
  {"nvrm", "probe-not-called", "NVRM: ", "probe routine was not called",
   "another driver (usually nouveau, or vfio-pci) owns the GPU", "driver.nouveau"},
  {"nvrm", "probe-failed", "NVRM: ", "probe routine failed",
   "the NVIDIA driver's probe failed for some GPUs", "driver.module-load-failed"},
  {"nvrm", "no-devices", "NVRM: ", "No NVIDIA devices probed",
   "the module found no GPU it could drive and did not load", "driver.module-load-failed"},
  {"nvrm", "no-devices", "NVRM: ", "None of the NVIDIA devices were initialized",
   "the module found no GPU it could drive and did not load", "driver.module-load-failed"},
  {"nvrm", "no-devices", "NVRM: ", "No NVIDIA GPU found",
   "the module found no GPU it could drive and did not load", "driver.module-load-failed"},
  {"nvrm", "open-module-unsupported", "NVRM: ", "installed in this system is not supported by open",
   "the open kernel module cannot drive this pre-Turing GPU (it has no GSP)",
   "driver.gpu-unsupported"},
  // The first open modules (515) refused every GPU but data-center ones unless
  // OpenRmEnableUnsupportedGpus=1; the GPU's init then fails. Seen in
  // https://github.com/NVIDIA/open-gpu-kernel-modules/issues/230 (515.43.04).
  {"nvrm", "open-module-unsupported", "NVRM: ", "Open nvidia.ko is only ready for use on Data Center",
   "this open kernel module release drives only data-center GPUs", "driver.gpu-unsupported"},
  {"nvrm", "gpu-unsupported", "NVRM: ", "installed in this system is not supported by the",
   "this driver branch does not support the GPU", "driver.gpu-unsupported"},
  // Legacy GPUs: "NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is" /
  // "NVRM:  supported through the NVIDIA 470.xx Legacy drivers." (osapi.c).
  {"nvrm", "gpu-unsupported", "NVRM: ", "supported through the NVIDIA",
   "this driver branch does not support the GPU: it needs a legacy driver",
   "driver.gpu-unsupported"},
  {"nvrm", "fallen-off-bus", "NVRM: ", "fallen off the bus",
   "the GPU no longer answers on PCIe (same as Xid 79)", "gpu.fallen-off-bus"},
  {"nvrm", "fallen-off-bus", "NVRM: ", "GPU is lost",
   "the driver already marked the GPU as lost", "gpu.fallen-off-bus"},
  // Linux kernel/module/main.c simplify_symbols(): pr_warn("%s: Unknown
  // symbol %s (err %d)\n", mod->name, ...), and kernel/module/version.c
  // check_version(): "%s: disagrees about version of symbol %s\n". The
  // module name is "nvidia" / "nvidia_uvm" (underscore).
  {"nvrm", "unknown-symbol", "nvidia: ", "Unknown symbol",
   "nvidia.ko was built for another kernel and did not load", "driver.module-load-failed"},
  {"nvrm", "unknown-symbol", "nvidia: ", "disagrees about version of symbol",
   "nvidia.ko was built for another kernel and did not load", "driver.module-load-failed"},
  // kmod tools/modprobe.c: ERR("could not insert '%s': Unknown symbol in
  // module, or unknown parameter (see dmesg)\n") (pasted terminal output).
  {"nvrm", "unknown-symbol", "", "could not insert 'nvidia': Unknown symbol in module",
   "modprobe could not load nvidia.ko", "driver.module-load-failed"},

  // kmod tools/modprobe.c: ERR("Module %s not found in directory %s\n", ...)
  // ("modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic").
  {"nvrm", "module-missing", "", "Module nvidia not found in directory",
   "modprobe finds no nvidia.ko for the running kernel", "driver.module-missing-for-kernel"},
  // DKMS (dkms.in, do_build): "Error! Bad return status for module build on
  // kernel: 6.5.0-14-generic (x86_64)", then "Consult /var/lib/dkms/nvidia/...".
  {"nvrm", "dkms-build-failed", "", "Bad return status for module build on kernel",
   "DKMS could not build the module for that kernel", "driver.module-missing-for-kernel"},

  // --- nvidia-uvm.ko ---
  {"uvm", "loaded", "nvidia-uvm: ", "Loaded the UVM driver",
   "nvidia_uvm loaded (drivers after 570.x no longer print this)", ""},
  // Same kernel sources as the nvidia: lines above.
  {"uvm", "unknown-symbol", "nvidia_uvm: ", "Unknown symbol",
   "nvidia_uvm.ko does not match the loaded nvidia.ko or kernel and did not load", "uvm.missing"},
  {"uvm", "unknown-symbol", "nvidia_uvm: ", "disagrees about version of symbol",
   "nvidia_uvm.ko does not match the loaded nvidia.ko or kernel and did not load", "uvm.missing"},
  {"uvm", "unknown-symbol", "", "could not insert 'nvidia_uvm': Unknown symbol in module",
   "modprobe could not load nvidia_uvm.ko", "uvm.missing"},

  // --- NVSwitch driver (SXid lines are the decoder's) ---
  {"nvswitch", "opened", "nvidia-nvswitch", ": open (major=",
   "an NVSwitch device was opened (by the fabric manager)", ""},

  // --- NVLink discovery (GPU driver) ---
  // kernel_nvlink_gh100.c and kernel_nvlink.c of open-gpu-kernel-modules; seen
  // in the field: "NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's
  // postRxDetLinkMask failed!" (github.com/leptonai/gpud/pull/1271).
  {"nvlink", "discovery-failed", "NVRM: ", "postRxDetLinkMask failed",
   "NVLink discovery failed: the driver could not read a peer GPU's detected NVLink links, so "
   "NVLink to that peer may not come up", ""},
  {"nvlink", "discovery-failed", "NVRM: ", "Failed to update Rx Detect Link mask",
   "NVLink discovery failed: the driver could not update the GPU's detected NVLink links", ""},

  // --- nvidia-peermem (GPUDirect RDMA) ---
  // "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid
  // context, skipping further processing": NVIDIA in
  // github.com/Mellanox/nv_peer_memory/issues/120: "That diagnostic is
  // harmless", fixed in R560 and newer.
  {"peermem", "invalid-context", "nvidia-peermem nv_get_p2p_free_callback",
   "detected invalid context",
   "nvidia-peermem's free callback met an invalid context: harmless (NVIDIA), and gone from "
   "driver R560 on", ""},

  // --- module signing / Secure Boot ---
  {"module-signature", "rejected", "Lockdown: ", "unsigned module loading is restricted",
   "Secure Boot lockdown refused an unsigned module", "driver.module-load-failed"},
  // Variants on some kernels: in the facts, marked unverified (§11.11).
  {"module-signature", "rejected", "", "Loading of unsigned module is rejected",
   "Secure Boot refused an unsigned module", "driver.module-load-failed"},
  {"module-signature", "rejected", "", "Loading of module with unavailable key is rejected",
   "Secure Boot refused a module signed with a key it does not trust",
   "driver.module-load-failed"},
  // modprobe's answer under lockdown (facts §2; kmod prints "could not
  // insert '%s': %s" with strerror(EKEYREJECTED)).
  {"module-signature", "rejected", "", "could not insert 'nvidia': Key was rejected by service",
   "Secure Boot refused nvidia.ko: it is not signed with an enrolled key",
   "driver.module-load-failed"},
  {"module-signature", "unsigned-tainted", "nvidia", "module verification failed",
   "the module is unsigned and taints the kernel; it still loaded (not a failure)", ""},

  // --- nouveau ---
  {"nouveau", "bound", "nouveau ", "",
   "nouveau drives this GPU, so the NVIDIA driver cannot", "driver.nouveau"},

  // --- nv-fabricmanager (user space; its own prefix precedes these) ---
  {"fabric-manager", "no-nvswitch", "",
   "from NVSwitch driver failed with error:WARNING Nothing to do",
   "no NVSwitch here: the fabric manager exits, harmless on PCIe/NVLink-bridge systems", ""},
  {"fabric-manager", "pre-nvl5", "", "Detected Pre-NVL5 system",
   "the start script found an NVSwitch generation before NVLink5", ""},
  {"fabric-manager", "nvswitch-fatal", "", "detected NVSwitch fatal error",
   "an NVSwitch reported a fatal SXid to the fabric manager", ""},
  {"fabric-manager", "nvswitch-non-fatal", "", "detected NVSwitch non-fatal error",
   "an NVSwitch reported a non-fatal SXid to the fabric manager", ""},
  {"fabric-manager", "topology-mismatch", "",
   "detected number of NVSwitches don't match with any supported system topology",
   "the fabric manager did not start: an NVSwitch is missing or dead",
   "fabric.switch-missing"},
  // It refuses to start against a driver of another version (same branch
  // and build needed, facts §8). Real line (NVIDIA/gpu-operator#544):
  //   fabric manager NVIDIA GPU driver interface version 530.30.02 don't
  //   match with driver version 530.41.03. Please update with matching ...
  {"fabric-manager", "version-mismatch", "", "don't match with driver version",
   "the fabric manager's version differs from the driver's, so it did not start",
   "fabric-manager.version-mismatch"},
  // A start that reached the NVSwitches, and the start script's stop: two
  // starts in one boot are a restart (NVIDIA/nvtrust#128, an H20 node):
  //   nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route ...
  //   nvidia-fabricmanager-start.sh[20411]: Stopped "Nvidia Fabric Manager"
  {"fabric-manager", "configured", "", "Successfully configured all the available",
   "the fabric manager configured the NVSwitches (one successful start)", ""},
  {"fabric-manager", "stopped", "", "Stopped \"Nvidia Fabric Manager\"",
   "the fabric manager was stopped", "fabric-manager.restarted-without-reset"},
  // NVLink5 (HGX B200/B300): the start script picks the management port and
  // needs ib_umad for NVLSM (spectrocloud/CanvOS#700); NVLSM says the same
  // in its own words (siderolabs/docs#581).
  {"fabric-manager", "nvl5", "", "Detected NVL5+ system",
   "the start script found the NVLink5 management bridge", ""},
  {"fabric-manager", "ib-umad-missing", "", "Kernel module \"ib_umad\" has not been loaded",
   "ib_umad is not loaded, so the fabric manager's start script gave up",
   "fabric.ib-modules-missing"},
  {"fabric-manager", "umad-init-failed", "", "umad_init: can't read ABI version",
   "NVLSM cannot reach the InfiniBand MAD interface: ib_umad is not loaded",
   "fabric.ib-modules-missing"},
  // systemd on the fabric manager's unit, as `systemctl status` and the
  // journal show it (NVIDIA/gpu-operator#544, data-infra/cube-studio#29):
  //   systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
  {"fabric-manager", "unit-failed", "", "nvidia-fabricmanager.service: Control process exited",
   "the fabric manager's unit failed to start", ""},
  {"fabric-manager", "multicast-failed", "", "failed to find the GPU handle",
   "NVLink multicast team setup failed", ""},
};

struct Named {
  int value;
  const char* name;
};

// RM_INIT_STATUS stages (osinit.c), facts §2.1.
const Named kRmInitStages[] = {
  {0x10, "RM_INIT_REG_SETUP_FAILED"},
  {0x11, "RM_INIT_SYS_ENVIRONMENT_FAILED"},
  {0x20, "RM_INIT_GPU_GPUMGR_ALLOC_GPU_FAILED"},
  {0x21, "RM_INIT_GPU_GPUMGR_CREATE_DEV_FAILED"},
  {0x22, "RM_INIT_GPU_GPUMGR_ATTACH_GPU_FAILED"},
  {0x23, "RM_INIT_GPU_PRE_INIT_FAILED"},
  {0x24, "RM_INIT_GPU_STATE_INIT_FAILED"},
  {0x25, "RM_INIT_GPU_LOAD_FAILED"},
  {0x26, "RM_INIT_GPU_DMA_CONFIGURATION_FAILED"},
  {0x27, "RM_INIT_GPU_GPUMGR_EXPANDED_VISIBILITY_FAILED"},
  {0x30, "RM_INIT_VBIOS_FAILED"},
  {0x31, "RM_INIT_VBIOS_POST_FAILED"},
  {0x32, "RM_INIT_VBIOS_X86EMU_FAILED"},
  {0x40, "RM_INIT_SCALABILITY_FAILED"},
  {0x41, "RM_INIT_WATCHDOG_FAILED"},
  {0x42, "RM_FIFO_GET_UD_BAR1_MAP_INFO_FAILED"},
  {0x43, "RM_GPUDB_REGISTER_FAILED"},
  {0x44, "RM_INIT_ALLOC_RMAPI_FAILED"},
  {0x45, "RM_INIT_GPUINFO_WITH_RMAPI_FAILED"},
  {0x60, "RM_INIT_FIRMWARE_POLICY_FAILED"},
  {0x61, "RM_INIT_FIRMWARE_FETCH_FAILED"},
  {0x62, "RM_INIT_FIRMWARE_INIT_FAILED"},
};

// NV_STATUS (nvstatuscodes.h): the common ones listed in facts §2.1.
const Named kNvStatus[] = {
  {0x0F, "NV_ERR_GPU_IS_LOST"},
  {0x11, "NV_ERR_GPU_NOT_FULL_POWER"},
  {0x1A, "NV_ERR_INSUFFICIENT_RESOURCES"},
  {0x1F, "NV_ERR_INVALID_ARGUMENT"},
  {0x25, "NV_ERR_INVALID_DATA"},
  {0x40, "NV_ERR_INVALID_STATE"},
  {0x51, "NV_ERR_NO_MEMORY"},
  {0x56, "NV_ERR_NOT_SUPPORTED"},
  {0x59, "NV_ERR_OPERATING_SYSTEM"},
  {0x62, "NV_ERR_RESET_REQUIRED"},
  {0x65, "NV_ERR_TIMEOUT"},
  {0xFFFF, "NV_ERR_GENERIC"},
};
// clang-format on

template <size_t N>
const char* lookup(const Named (&table)[N], int value) {
  for (const Named& n : table) {
    if (n.value == value) return n.name;
  }
  return nullptr;
}

}  // namespace

const std::vector<LogPattern>& log_patterns() { return kPatterns; }

const LogPattern* match_log_pattern(std::string_view message) {
  // Every kernel-log line with a scanner keyword that is no Xid, SXid or AER
  // comes here, most of them the NVIDIA modules' chatter that matches nothing
  // (bench/logs_scan.py, profile nvidia-chatter). So the table is prepared
  // once: its C strings measured, and each needle a Boyer-Moore-Horspool
  // searcher, which skips ahead by up to the needle's length where
  // string_view::find stops at every occurrence of its first letter.
  using Searcher = std::boyer_moore_horspool_searcher<std::string_view::const_iterator>;
  struct Prepared {
    std::string_view prefix, needle;
    Searcher searcher;
  };
  static const std::vector<Prepared> prepared = [] {
    std::vector<Prepared> m;
    m.reserve(kPatterns.size());
    for (const LogPattern& p : kPatterns) {
      std::string_view needle = p.needle;
      m.push_back({p.prefix, needle, Searcher(needle.begin(), needle.end())});
    }
    return m;
  }();
  for (size_t i = 0; i < prepared.size(); ++i) {
    const Prepared& p = prepared[i];
    if (!message.starts_with(p.prefix)) continue;
    if (!p.needle.empty() &&
        std::search(message.begin(), message.end(), p.searcher) == message.end()) {
      continue;
    }
    return &kPatterns[i];
  }
  return nullptr;
}

const char* rm_init_stage_name(int stage) { return lookup(kRmInitStages, stage); }
const char* nv_status_name(int status) { return lookup(kNvStatus, status); }

}  // namespace gd
