// The Xid catalog. Transcribed 2026-12 from docs/nvidia-facts.md
// §1.3, whose sources are:
//  - NVIDIA's Xid catalog for Ampere and newer (mnemonic, description,
//    immediate/investigatory "resolution bucket"):
//    https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, in
//    the machine copy leptonai/gpud components/accelerator/nvidia/xid/
//    catalog_generated.go (generated 2025-10-29 from that page; also the
//    source of the exact PSHC_*/NVLINK_SECURE_* mnemonics of 162-170).
//  - The older NVIDIA Xid page (cause matrix) and
//    NVIDIA/open-gpu-kernel-modules 595.45.04 src/common/sdk/nvidia/inc/
//    nverror.h (names; 173-176 exist only there).
//  - NVIDIA/DCGM 4.6.0 modules/health/DcgmHealthWatch.cpp: the "devastating"
//    set 48, 74, 79, 95, 119, 120, 140 is always a failure, so none of those
//    is a plain "restart the job".
//
// How the columns were mapped:
//  - action from NVIDIA's immediate bucket: IGNORE -> kNone, RESTART_APP ->
//    kRestartApp, RESET_GPU -> kResetGpu, RESTART_BM/RESTART_VM -> kReboot,
//    UPDATE_SWFW -> kUpdateSoftware, CONTACT_SUPPORT alone or
//    CHECK_MECHANICALS -> kDrainInspect (escalate: possible RMA); the
//    workflow buckets (WORKFLOW_XID_48, WORKFLOW_NVLINK_ERR, NVLink5) follow
//    the facts' "recommended action" column.
//  - fault from the facts' "likely domain" column (a synthesis, not an NVIDIA
//    field): the first domain it names wins; "firmware" counts as driver
//    unless hardware is named first.
#include "catalog/xid.h"

#include <algorithm>

namespace gd {
namespace {

using F = XidFault;
using A = XidAction;

// clang-format off
const std::vector<XidInfo> kXids = {
  {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing (channel idle timeout)",
   F::kApplication, A::kRestartApp,
   "restart the job; if it repeats on this GPU, escalate to NVIDIA support"},
  {13, "ROBUST_CHANNEL_GR_EXCEPTION",
   "graphics/compute engine exception (illegal address or instruction, device assert)",
   F::kApplication, A::kRestartApp,
   "restart the job and check its code; if different jobs hit it on the same GPU, run GPU diagnostics (dcgmi diag -r 3)"},
  {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
   "GPU memory page fault: a kernel accessed an illegal address",
   F::kApplication, A::kRestartApp,
   "restart the job and check its code (bad pointer, use after free); escalate only if it follows one GPU"},
  {32, "ROBUST_CHANNEL_PBDMA_ERROR", "invalid or corrupted push-buffer stream",
   F::kDriver, A::kRestartApp,
   "restart the job; check the GPU's PCIe AER counters for bus corruption"},
  {38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "driver firmware error (FECS watchdog)",
   F::kDriver, A::kNone, "log it; no action needed"},
  {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
   "a channel was torn down after a fault in the application; the GPU is fine",
   F::kApplication, A::kNone, "no action on the GPU; look at the application's own error"},
  {44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "graphics engine fault during a context switch",
   F::kDriver, A::kNone, "log it; escalate to NVIDIA support if it repeats"},
  {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
   "preemptive cleanup after an earlier error or a killed process",
   F::kSecondary, A::kFollowOther,
   "act on the Xid that caused it (the line may say 'caused by previous Xid N'); alone on an NVSwitch system, restart the fabric manager: sudo systemctl restart nvidia-fabricmanager"},
  {46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing (GPU timeout)",
   F::kDriver, A::kResetGpu,
   "stop the GPU's processes, then reset it: sudo nvidia-smi -r -i <gpu>"},
  {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "double-bit (uncorrectable) ECC memory error",
   F::kHardware, A::kResetGpu,
   "drain the GPU, then reset it to apply the pending row remap: sudo nvidia-smi -r -i <gpu>; repeated DBEs or a remap failure (Xid 64) mean RMA"},
  {54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "auxiliary power is not connected to the board",
   F::kHardware, A::kDrainInspect, "drain the node and check the GPU's power cables"},
  {56, "DISPLAY_CHANNEL_EXCEPTION",
   "unused on Ampere and newer (legacy: display engine error)",
   F::kDriver, A::kDrainInspect, "unexpected on this generation: escalate to NVIDIA support"},
  {57, "FB_LINK_TRAINING_FAILURE_ERROR",
   "unused on Ampere and newer (legacy: error programming the video-memory interface)",
   F::kHardware, A::kDrainInspect, "drain the node and escalate to NVIDIA support"},
  {58, "FB_MEMORY_ERROR",
   "unused on Ampere and newer (legacy: unstable video-memory interface)",
   F::kHardware, A::kDrainInspect, "drain the node and escalate to NVIDIA support"},
  {61, "PMU_BREAKPOINT",
   "unused on Ampere and newer (legacy: internal micro-controller breakpoint/warning)",
   F::kDriver, A::kResetGpu,
   "stop the GPU's processes and reset it: sudo nvidia-smi -r -i <gpu>; escalate if it repeats"},
  {62, "PMU_HALT_ERROR", "internal micro-controller halt",
   F::kHardware, A::kResetGpu,
   "stop the GPU's processes and reset it: sudo nvidia-smi -r -i <gpu>; escalate to NVIDIA support"},
  // nverror.h in 595 also names 63/64 INFOROM_PAGE_RETIREMENT_EVENT/_FAILURE.
  {63, "INFOROM_DRAM_RETIREMENT_EVENT",
   "a memory page retirement or row remap was recorded (handled)",
   F::kInformational, A::kNone,
   "no action now; if a row remap is pending (nvidia-smi -q -d ROW_REMAPPER), reset the GPU when idle: sudo nvidia-smi -r -i <gpu>; trend the count"},
  {64, "INFOROM_DRAM_RETIREMENT_FAILURE", "page retirement or row remap failed",
   F::kHardware, A::kDrainInspect,
   "drain the node and mark the GPU failed: an RMA candidate"},
  {65, "ROBUST_CHANNEL_NVENC1_ERROR",
   "unused on Ampere and newer (legacy: video processor exception)",
   F::kDriver, A::kDrainInspect, "unexpected on this generation: escalate to NVIDIA support"},
  {66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "illegal register access by the driver",
   F::kDriver, A::kNone, "log it; no action needed"},
  {67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "illegal access by the driver",
   F::kDriver, A::kNone, "log it; no action needed"},
  {68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 (video decoder) exception",
   F::kDriver, A::kRestartApp, "restart the job"},
  {69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "graphics engine class error",
   F::kApplication, A::kRestartApp, "restart the job and check the application/CUDA version"},
  {73, "ROBUST_CHANNEL_NVENC2_ERROR", "unused on Ampere and newer (legacy: NVENC2 error)",
   F::kDriver, A::kDrainInspect, "unexpected on this generation: escalate to NVIDIA support"},
  {74, "NVLINK_ERROR", "NVLink error (the line names the link and error registers)",
   F::kHardware, A::kResetGpu,
   "drain the GPU and reset it: sudo nvidia-smi -r -i <gpu>; repeated on the same link, reseat or RMA (check nvidia-smi nvlink --status)"},
  {78, "VGPU_START_ERROR", "vGPU start error",
   F::kDriver, A::kUpdateSoftware, "update the vGPU software"},
  {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
   "GPU has fallen off the bus: PCIe reads return all ones",
   F::kHardware, A::kReboot,
   "drain and reboot the node; if it repeats, check PCIe link, riser, power and cooling, then reseat or RMA"},
  {80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "corrupted data sent to the GPU",
   F::kHardware, A::kRestartApp,
   "restart the job; check the GPU's PCIe AER counters and link for errors"},
  {81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR",
   "unused on Ampere and newer (legacy: VGA subsystem error)",
   F::kHardware, A::kDrainInspect, "drain the node and escalate to NVIDIA support"},
  {92, "EXCESSIVE_SBE_INTERRUPTS", "high rate of single-bit (corrected) ECC errors",
   F::kHardware, A::kNone,
   "no action now; trend the corrected ECC counts (nvidia-smi -q -d ECC) and schedule an inspection"},
  {93, "INFOROM_ERASE_LIMIT_EXCEEDED", "non-fatal InfoROM wear-limit violation",
   F::kHardware, A::kNone, "no action now; note it for the next maintenance"},
  {94, "ROBUST_CHANNEL_CONTAINED_ERROR",
   "contained uncorrectable memory error: only the affected process was killed",
   F::kHardware, A::kRestartApp,
   "restart the job; the GPU stays usable; if a row remap is pending, reset the GPU when idle: sudo nvidia-smi -r -i <gpu>"},
  {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR",
   "uncontained memory error: all work on the GPU is affected",
   F::kHardware, A::kResetGpu,
   "drain the GPU, stop its processes and reset it: sudo nvidia-smi -r -i <gpu>; repeated -> RMA"},
  {109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context-switch timeout",
   F::kApplication, A::kResetGpu,
   "stop the GPU's processes, then reset it: sudo nvidia-smi -r -i <gpu>"},
  {110, "SEC_FAULT_ERROR", "security fault",
   F::kDriver, A::kResetGpu,
   "stop the GPU's processes and reset it: sudo nvidia-smi -r -i <gpu>; escalate to NVIDIA support"},
  {119, "GSP_RPC_TIMEOUT", "timeout waiting for a GSP firmware RPC response",
   F::kDriver, A::kResetGpu,
   "drain the GPU, stop its processes and reset it: sudo nvidia-smi -r -i <gpu>; if the reset fails, reboot the node"},
  {120, "GSP_ERROR", "GSP firmware error (e.g. GSP task exception)",
   F::kDriver, A::kResetGpu,
   "drain the GPU, stop its processes and reset it: sudo nvidia-smi -r -i <gpu>; if the reset fails, reboot the node"},
  {121, "C2C_ERROR", "chip-to-chip (Grace-GPU) link corrected error",
   F::kHardware, A::kNone, "no action now; watch for repeats"},
  {122, "SPI_PMU_RPC_READ_FAIL", "unused per NVIDIA's catalog (SPI/PMU RPC read failure)",
   F::kDriver, A::kDrainInspect, "unexpected: escalate to NVIDIA support"},
  {123, "SPI_PMU_RPC_WRITE_FAIL", "unused per NVIDIA's catalog (SPI/PMU RPC write failure)",
   F::kDriver, A::kDrainInspect, "unexpected: escalate to NVIDIA support"},
  {124, "SPI_PMU_RPC_ERASE_FAIL", "unused per NVIDIA's catalog (SPI/PMU RPC erase failure)",
   F::kDriver, A::kDrainInspect, "unexpected: escalate to NVIDIA support"},
  {125, "INFOROM_FS_ERROR", "unused per NVIDIA's catalog (InfoROM file-system error)",
   F::kDriver, A::kDrainInspect, "unexpected: escalate to NVIDIA support"},
  {136, "ALI_TRAINING_FAIL", "NVLink link (ALI) training failed",
   F::kHardware, A::kResetGpu,
   "reset the GPU: sudo nvidia-smi -r -i <gpu>; inspect the NVLink links and their signal integrity"},
  {137, "NVLINK_PRIV_ERR", "NVLink privilege (FLA) error: an illegal peer access",
   F::kApplication, A::kNone, "log it; check the application's peer-to-peer setup"},
  {140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "an uncorrectable ECC error escaped containment",
   F::kHardware, A::kResetGpu,
   "drain the GPU, stop its processes and reset it: sudo nvidia-smi -r -i <gpu>; escalate to NVIDIA support"},
  {143, "GPU_INIT_ERROR", "GPU initialization error",
   F::kHardware, A::kResetGpu,
   "reset the GPU: sudo nvidia-smi -r -i <gpu>; escalate to NVIDIA support if it repeats"},
  // 144-150: the action depends on the sub-rule decoded from the line
  // (facts §1.5); kResetGpu is the conservative default until decoded.
  {144, "NVLINK_SAW_ERROR", "NVLink5 SAW unit error (decode the sub-rule)",
   F::kHardware, A::kResetGpu,
   "decode the unit and error status; a fatal one needs a GPU reset: sudo nvidia-smi -r -i <gpu>"},
  {145, "NVLINK_RLW_ERROR", "NVLink5 RLW unit error (decode the sub-rule)",
   F::kDriver, A::kResetGpu,
   "decode the unit and error status and read the accompanying Xid 154; a fatal one needs a GPU reset: sudo nvidia-smi -r -i <gpu>"},
  {146, "NVLINK_TLW_ERROR", "NVLink5 TLW unit error (decode the sub-rule)",
   F::kHardware, A::kResetGpu,
   "decode the unit and error status; a fatal one needs a GPU reset: sudo nvidia-smi -r -i <gpu>"},
  {147, "NVLINK_TREX_ERROR", "NVLink5 TREX unit error (not expected in production)",
   F::kDriver, A::kResetGpu,
   "decode the unit and error status; reset the GPU (sudo nvidia-smi -r -i <gpu>) and escalate to NVIDIA support"},
  {148, "NVLINK_NVLPW_CTRL_ERROR", "NVLink5 NVLPW_CTRL error (software, non-fatal)",
   F::kDriver, A::kNone, "log it; no action needed"},
  {149, "NVLINK_NETIR_ERROR", "NVLink5 NETIR error: link events, bit-error rate, link down",
   F::kHardware, A::kResetGpu,
   "decode the unit; on link down reset the GPU (sudo nvidia-smi -r -i <gpu>) and check the peer and cables"},
  {150, "NVLINK_MSE_ERROR", "NVLink5 MSE watchdog (firmware, fatal)",
   F::kDriver, A::kResetGpu,
   "stop the GPU's processes, then reset it: sudo nvidia-smi -r -i <gpu>"},
  {151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "key-rotation error (confidential computing)",
   F::kDriver, A::kReboot, "restart the VM"},
  {154, "GPU_RECOVERY_ACTION_CHANGED",
   "the GPU's required recovery action changed (because of another Xid)",
   F::kInformational, A::kFollowOther,
   "read the new action in the line (e.g. 'GPU Reset Required', 'Drain and Reset') and do it"},
  {155, "NVLINK_SW_DEFINED_ERROR", "NVLink software-defined error",
   F::kDriver, A::kResetGpu,
   "stop the GPU's processes, then reset it: sudo nvidia-smi -r -i <gpu>"},
  {156, "RESOURCE_RETIREMENT_EVENT", "resource retirement event (handled by the hardware)",
   F::kHardware, A::kResetGpu,
   "reset the GPU when idle to apply the retirement: sudo nvidia-smi -r -i <gpu>"},
  {157, "RESOURCE_RETIREMENT_FAILURE", "resource retirement failure",
   F::kHardware, A::kDrainInspect, "drain the node and escalate to NVIDIA support"},
  {158, "GPU_FATAL_TIMEOUT", "GPU fatal timeout",
   F::kHardware, A::kResetGpu,
   "stop the GPU's processes, then reset it: sudo nvidia-smi -r -i <gpu>"},
  {159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI non-data error",
   F::kApplication, A::kRestartApp,
   "restart the job and check its unified-memory (UVM) usage"},
  {160, "CHANNEL_RETIREMENT_EVENT", "channel retirement event",
   F::kDriver, A::kNone, "log it; no action needed"},
  {161, "CHANNEL_RETIREMENT_FAILURE", "channel retirement failure",
   F::kDriver, A::kNone, "log it; no action needed"},
  // 162-172: NVIDIA's catalog leaves both buckets blank. 595's nverror.h
  // spells 162-165 differently (ISINK_REENGAGED ... _ZERO_LIFETIME).
  {162, "PSHC_REENGAGED", "power-smoothing circuitry re-engaged",
   F::kHardware, A::kNone, "no action; note the platform power event"},
  {163, "PSHC_DISENGAGED", "power-smoothing circuitry disengaged",
   F::kHardware, A::kNone, "no action now; check the platform's power smoothing"},
  {164, "PSHC_LOW_LIFETIME", "power-smoothing circuitry reached low lifetime",
   F::kHardware, A::kNone, "no action now; plan service of the power-smoothing circuitry"},
  {165, "PSHC_ZERO_LIFETIME", "power-smoothing circuitry lifetime exhausted",
   F::kHardware, A::kNone, "plan service: the power-smoothing circuitry is worn out"},
  {166, "NVLINK_SECURE_CRYPTO_ERR",
   "confidential-computing traffic before the link was set up for encryption",
   F::kHardware, A::kNone, "log it; escalate to NVIDIA support if it repeats"},
  {167, "PCIE_FATAL_TIMEOUT", "PCIe fatal timeout",
   F::kHardware, A::kDrainInspect, "drain the node and inspect the GPU's PCIe link"},
  {168, "REDUCED_GPU_MEMORY_CAPACITY",
   "reduced GPU memory capacity: errors in the write-protected region",
   F::kHardware, A::kDrainInspect, "drain the node and inspect the GPU's memory"},
  {169, "SEC2_HALT_ERROR", "internal micro-controller (SEC2) halt",
   F::kHardware, A::kNone, "log it; escalate to NVIDIA support if it repeats"},
  {170, "NVLINK_SECURE_OTHER", "NVLink interrupt in confidential-computing mode",
   F::kHardware, A::kNone, "log it; escalate to NVIDIA support if it repeats"},
  {171, "UNCORRECTABLE_DRAM_ERROR", "says an accompanying Xid 48 was in DRAM",
   F::kHardware, A::kFollowOther, "act on the Xid 48 it accompanies"},
  {172, "UNCORRECTABLE_SRAM_ERROR", "says an accompanying Xid 48 was in SRAM",
   F::kHardware, A::kFollowOther,
   "act on the Xid 48 it accompanies; check the SRAM error thresholds (nvidia-smi -q -d ECC)"},
  // 173-176: names from 595.45.04 nverror.h only; meanings unverified.
  {173, "C2C_FATAL_LINK_FAILURE", "not in NVIDIA's Xid catalog",
   F::kInformational, A::kNone, "log it with its name; escalate if it repeats"},
  {174, "ROBUST_CHANNEL_RESETCHANNEL_KILL_PROCESS_SILENT", "not in NVIDIA's Xid catalog",
   F::kInformational, A::kNone, "log it with its name"},
  {175, "MEMORY_SUBSYSTEM_ERROR", "not in NVIDIA's Xid catalog",
   F::kInformational, A::kNone, "log it with its name; escalate if it repeats"},
  {176, "PCIE_CORRECTABLE_ERROR_FAULT", "not in NVIDIA's Xid catalog",
   F::kInformational, A::kNone, "log it with its name"},
};
// clang-format on

}  // namespace

const std::vector<XidInfo>& xid_catalog() { return kXids; }

const XidInfo* find_xid(int code) {
  auto it = std::lower_bound(kXids.begin(), kXids.end(), code,
                             [](const XidInfo& x, int c) { return x.code < c; });
  if (it == kXids.end() || it->code != code) return nullptr;
  return &*it;
}

const char* xid_fault_name(XidFault f) {
  switch (f) {
    case XidFault::kApplication:
      return "application";
    case XidFault::kDriver:
      return "driver";
    case XidFault::kHardware:
      return "hardware";
    case XidFault::kSecondary:
      return "secondary";
    case XidFault::kInformational:
      return "informational";
  }
  return "unknown";
}

const char* xid_action_name(XidAction a) {
  switch (a) {
    case XidAction::kNone:
      return "none";
    case XidAction::kRestartApp:
      return "restart the job";
    case XidAction::kUpdateSoftware:
      return "update the driver/firmware";
    case XidAction::kResetGpu:
      return "reset the GPU";
    case XidAction::kReboot:
      return "reboot the node";
    case XidAction::kDrainInspect:
      return "drain and inspect the node";
    case XidAction::kFollowOther:
      return "act on the Xid that caused it";
  }
  return "unknown";
}

}  // namespace gd
