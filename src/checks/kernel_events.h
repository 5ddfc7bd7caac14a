// Helpers for the checks that read the kernel log (xid, fallen-off-bus,
// reset-required, pcie-errors, module-load) and for `gpudoctor logs`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"

namespace gd {

// The kernel log was read (from some source) and can speak for the node.
bool kernel_log_read(const Snapshot& s);

// Last seen within the window, or at an unknown time (a pasted line): such
// an event still counts.
bool in_window(const KernelEvent& e, const Config& c);

// "12 s", "14 min", "3.5 h", "2.0 d".
std::string format_age(double seconds);

struct GpuNaming {
  int index = -1;    // nvidia-smi's index (PCI order); -1 unknown
  std::string name;  // "NVIDIA GeForce RTX 4090"; "" unknown
  std::string uuid;  // "GPU-..."; "" unknown
};
// What the snapshot knows of the GPU at a PCI address: sysfs, the driver's
// /proc files, NVML, and the kernel log's own "GPU at PCI:" banners.
GpuNaming gpu_naming(const Snapshot& s, const std::string& bdf);
// "GPU 1 (0000:41:00.0, NVIDIA GeForce RTX 4090)" or "0000:41:00.0".
std::string gpu_title(const Snapshot& s, const std::string& bdf);

// "3 times, first [  1.0], last [  9.0] (12 min ago)", "at Dec 02 10:41:05", "once".
// `to_log_end`: the ages count back from the log's last line (a file), not now.
std::string occurrence_text(const KernelEvent& e, bool to_log_end);
// One evidence line: who, how often, when, and the log line itself.
std::string event_evidence(const Snapshot& s, const KernelEvent& e);

// "The log names more than 8192 distinct NVIDIA events, all gpudoctor keeps:
// 12 occurrences of further events were counted, not decoded." "" when none.
std::string unfolded_text(const KernelLogInfo& k);

// The kernel log's events of one kind, optionally only in the window.
std::vector<const KernelEvent*> events_of(const Snapshot& s, const std::string& kind);
// The kernel log's (and the fabric manager log's) events whose pattern is
// evidence for a finding id (LogPattern::finding in catalog/nvrm.cc), at any age.
std::vector<const KernelEvent*> events_for_finding(const Snapshot& s, std::string_view id);
// The fabric manager's events of one type ("stopped", "no-nvswitch"), from
// the journal and from its own log.
std::vector<const KernelEvent*> fabric_manager_events(const Snapshot& s, std::string_view type);

}  // namespace gd
