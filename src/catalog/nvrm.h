// Kernel-log message patterns other than Xid: NVRM lines that matter, UVM,
// NVSwitch, fabric manager, nouveau, module signing, PCIe AER. Each pattern
// is a literal the message must contain; the decoder (kernlog/decode.cc)
// tries them in table order. Source: docs/nvidia-facts.md §2
// (open-gpu-kernel-modules 595.45.04 format strings, Linux AER/lockdown).
#pragma once

#include <string_view>
#include <vector>

namespace gd {

struct LogPattern {
  const char* kind;     // KernelEvent::kind: "nvrm", "uvm", "nouveau", "module-signature", ...
  const char* type;     // KernelEvent::type: "api-mismatch", "rm-init-failed", ...
  const char* prefix;   // the message must start with this ("" = anywhere)
  const char* needle;   // and contain this literal
  const char* meaning;  // one line for people
  const char* finding;  // the finding id it is evidence for ("" none)
};

const std::vector<LogPattern>& log_patterns();

// First pattern that matches message, nullptr when none does.
const LogPattern* match_log_pattern(std::string_view message);

// RmInitAdapter failed! (0xII:0xSS:LINE): names of the init stage and
// NV_STATUS (facts §2.1); nullptr when unknown.
const char* rm_init_stage_name(int stage);
const char* nv_status_name(int status);

}  // namespace gd
