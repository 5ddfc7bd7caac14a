// The Xid catalog: every code in docs/nvidia-facts.md §1.3 with
// its meaning, where the fault usually lies and what to do. Transcribed from
// NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors, Ampere and newer)
// and nverror.h of open-gpu-kernel-modules 595.45.04 (see xid.cc).
#pragma once

#include <string_view>
#include <vector>

namespace gd {

// Where the fault usually lies.
enum class XidFault { kApplication, kDriver, kHardware, kSecondary, kInformational };

// What to do, from least to most disruptive.
enum class XidAction {
  kNone,            // informational: log only
  kRestartApp,      // restart the job; the GPU is fine
  kUpdateSoftware,  // update driver/firmware
  kResetGpu,        // reset the GPU (nvidia-smi -r) before reuse
  kReboot,          // reboot the node
  kDrainInspect,    // drain the node and inspect hardware (cables, power, RMA)
  kFollowOther,     // secondary: act on the Xid that caused it (45, 154)
};

struct XidInfo {
  int code;
  const char* mnemonic;  // nverror.h name, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
  const char* meaning;   // one line
  XidFault fault;
  XidAction action;
  const char* advice;  // one line: the action in words, with the command where there is one
};

const std::vector<XidInfo>& xid_catalog();  // sorted by code
const XidInfo* find_xid(int code);          // nullptr for a code not in the catalog

const char* xid_fault_name(XidFault f);    // "application", "driver", "hardware", ...
const char* xid_action_name(XidAction a);  // "restart the job", "reset the GPU", ...

}  // namespace gd
