#include "checks/kernel_events.h"

#include <algorithm>
#include <cstdio>

#include "catalog/nvrm.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/time.h"

namespace gd {

bool kernel_log_read(const Snapshot& s) {
  return s.kernel_log.attempted && !s.kernel_log.source.empty();
}

bool in_window(const KernelEvent& e, const Config& c) {
  return !e.age_s || *e.age_s <= c.kernel_log_window_s;
}

std::string format_age(double seconds) {
  char buf[32];
  if (seconds < 90) {
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  } else if (seconds < 90 * 60) {
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  } else if (seconds < 48 * 3600) {
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  }
  return buf;
}

GpuNaming gpu_naming(const Snapshot& s, const std::string& bdf) {
  GpuNaming id;
  std::vector<const PciDevice*> gpus = pci_gpus(s);
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i]->bdf != bdf) continue;
    id.index = static_cast<int>(i);  // nvidia-smi numbers GPUs in PCI order
    id.name = gpu_name(s, *gpus[i]);
    id.uuid = gpus[i]->proc_uuid;
  }
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok() || g.pci_bus_id.value != bdf) continue;
    if (id.index < 0) id.index = static_cast<int>(g.index);
    if (id.name.empty() && g.name.ok()) id.name = g.name.value;
    if (id.uuid.empty() && g.uuid.ok()) id.uuid = g.uuid.value;
  }
  if (id.uuid.empty()) {
    auto it = s.kernel_log.gpu_uuids.find(bdf);
    if (it != s.kernel_log.gpu_uuids.end()) id.uuid = it->second;
  }
  return id;
}

std::string gpu_title(const Snapshot& s, const std::string& bdf) {
  if (bdf.empty()) return "(no GPU named)";
  GpuNaming id = gpu_naming(s, bdf);
  if (id.index < 0 && id.name.empty()) return bdf;
  std::string out = id.index >= 0 ? "GPU " + std::to_string(id.index) + " (" + bdf : "(" + bdf;
  if (!id.name.empty()) out += ", " + id.name;
  return out + ")";
}

namespace {

// A boot-clock stamp ("[ 3014.443126]") is no time of day: the wall time
// goes before it when it is known.
std::string stamp_text(const std::string& stamp, std::optional<int64_t> unix_s) {
  if (!unix_s || stamp.empty() || stamp[0] != '[') return stamp;
  std::string wall = iso_time_s(*unix_s);
  return wall.empty() ? stamp : wall + " " + stamp;
}

}  // namespace

std::string occurrence_text(const KernelEvent& e, bool to_log_end) {
  std::string out;
  if (e.count > 1) {
    out = std::to_string(e.count) + " times";
    if (!e.first.empty()) out += ", first " + stamp_text(e.first, e.first_unix_s);
    if (!e.last.empty()) out += ", last " + stamp_text(e.last, e.last_unix_s);
  } else {
    out = e.last.empty() ? "once" : "at " + stamp_text(e.last, e.last_unix_s);
  }
  if (e.age_s) {
    out += " (" + format_age(*e.age_s) + (to_log_end ? " before the log's last line)" : " ago)");
  }
  return out;
}

std::string event_evidence(const Snapshot& s, const KernelEvent& e) {
  std::string who = e.gpu.empty() ? "" : gpu_title(s, e.gpu) + ": ";
  return who + occurrence_text(e, s.kernel_log.ages_to_log_end) + ": " + e.line;
}

std::string unfolded_text(const KernelLogInfo& k) {
  if (k.unfolded == 0) return "";
  return "The log names more than " + std::to_string(kMaxKernelEvents) +
         " distinct NVIDIA events, all gpudoctor keeps: " + std::to_string(k.unfolded) +
         " occurrence(s) of further events were counted, not decoded.";
}

std::vector<const KernelEvent*> events_of(const Snapshot& s, const std::string& kind) {
  std::vector<const KernelEvent*> out;
  for (const KernelEvent& e : s.kernel_log.events) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

namespace {

// The kernel log's events, then the fabric manager log's: the fabric
// manager says the same things in its journal entries and in its own log.
template <class Keep>
std::vector<const KernelEvent*> both_logs_where(const Snapshot& s, Keep keep) {
  std::vector<const KernelEvent*> out;
  for (const auto* events : {&s.kernel_log.events, &s.fabric.log_events}) {
    for (const KernelEvent& e : *events) {
      if (keep(e)) out.push_back(&e);
    }
  }
  return out;
}

}  // namespace

std::vector<const KernelEvent*> events_for_finding(const Snapshot& s, std::string_view id) {
  return both_logs_where(s, [&](const KernelEvent& e) {
    return std::any_of(log_patterns().begin(), log_patterns().end(), [&](const LogPattern& p) {
      return e.kind == p.kind && e.type == p.type && id == p.finding;
    });
  });
}

std::vector<const KernelEvent*> fabric_manager_events(const Snapshot& s, std::string_view type) {
  return both_logs_where(
      s, [&](const KernelEvent& e) { return e.kind == "fabric-manager" && e.type == type; });
}

}  // namespace gd
