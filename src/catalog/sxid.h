// The SXid catalog: what an NVSwitch error code means and what to do.
//
// Two sources (sxid.cc cites each row):
// - the blocks every code belongs to, from NVSWITCH_ERR_TYPE in
//   open-gpu-kernel-modules src/common/nvswitch/interface/ctrl_dev_nvswitch.h
//   (595.45.04; history back to 515.43.04), which NVIDIA's Fabric Manager
//   User Guide names as the full list;
// - the codes the guide itself classes, with its class and recommended
//   action: Fabric Manager User Guide v2.3 (March 2025), Tables 21 (non-fatal),
//   22 (fatal), 23 (always fatal) and 24 (other notable),
//   https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html
//
// The driver prints its own word on each line (Fatal, Non-fatal,
// Correctable, or none for SOE and thermal lines); the guide's class is kept
// apart from it: they can differ for one code.
#pragma once

#include <string_view>

namespace gd {

// The guide's class of a code; kUnlisted for the codes it leaves to the header.
enum class SxidClass { kUnlisted, kNonFatal, kFatal, kAlwaysFatal, kNotable };

struct SxidInfo {
  int code;
  const char* name;  // NVSWITCH_ERR_HW_... without the prefix, "NPORT_EGRESS_PRIVRSPERR"
  SxidClass guide;
  const char* meaning;  // one line, the guide's words where it has them
  const char* advice;   // one line: the guide's action, on a bare-metal system
};

// The block a code belongs to ("NPORT egress", "MINION link controller",
// "SOE firmware"): "" for a code in none. Driver 550.40.07 renumbered 28xxx
// and 29xxx (multicast and reduction tstate before, OSFP thermal and
// multicast after): a multicast line's "MC TS" decides, else both are named.
std::string_view sxid_block(int code, std::string_view message);
// The guide's row for a code; nullptr for a code it does not list.
const SxidInfo* find_sxid(int code);

const char* sxid_class_name(SxidClass c);  // "non-fatal", "fatal", "always fatal", ...

}  // namespace gd
