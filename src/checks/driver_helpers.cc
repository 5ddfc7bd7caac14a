#include "checks/driver_helpers.h"

#include <algorithm>
#include <cstdio>

#include "catalog/cuda_errors.h"
#include "checks/util.h"
#include "facts/query.h"
#include "facts/runtime.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {

std::string nvidia_char_device(const Snapshot& s) {
  // "nvidia-frontend" on older drivers, "nvidia" and "nvidiactl" on newer
  // ones (the H200 record, 580): all 195, registered only while the module is in.
  for (const char* name : {"nvidiactl", "nvidia", "nvidia-frontend"}) {
    if (s.driver.char_majors.count(name) > 0) return name;
  }
  return "";
}

bool nvidia_driver_loaded(const Snapshot& s) {
  return s.driver.proc_driver_nvidia || find_module(s, "nvidia") != nullptr ||
         !nvidia_char_device(s).empty();
}

std::string module_list_doubt(const Snapshot& s) {
  for (const auto& p : s.probes) {
    if (p.name != "driver") continue;
    for (const auto& g : p.gaps) {
      if (g.field == "driver.modules") return "/proc/modules could not be read (" + g.reason + ")";
    }
    if (p.unrecognised_lines > 0) {
      return std::to_string(p.unrecognised_lines) + " unrecognised line" +
             (p.unrecognised_lines == 1 ? "" : "s") + " in /proc/modules";
    }
    // Snapshots from before the count was recorded say it in the detail
    // ("2 unrecognised lines in /proc/modules"); the unrecognised lines were
    // dropped, so the list may miss modules.
    for (const auto& part : split_strings(p.detail, ';')) {
      std::string_view t = part;
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      if (t.find("/proc/modules") != std::string_view::npos) return std::string(t);
    }
  }
  return "";
}

std::string module_evidence(const ModuleInfo& m) {
  if (m.source == ModuleInfo::kFromSysModule) {
    if (m.builtin) return "/sys/module/" + m.name + ": built into the kernel";
    return "/sys/module/" + m.name + ": initstate " + (m.state.empty() ? "unknown" : m.state);
  }
  if (m.state.empty()) return "/proc/modules: " + m.name + " listed, in a line of unknown form";
  std::string out = "/proc/modules: " + m.name + " " + m.state;
  // "-": a kernel without module unloading (CONFIG_MODULE_UNLOAD), still loaded.
  if (m.refcount == ModuleInfo::kRefcountUnknown) out += ", refcount -";
  return out;
}

bool cuda_started_for_user(const Snapshot& s) {
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr || !r->child_error.empty() || r->library_loaded.empty()) return false;
  if (r->init_rc != 0 || r->device_count_rc != 0 || r->devices.empty()) return false;
  // A context not asked for (ctx_skipped: a job's GPU) proves nothing
  // either way; at least one must have been opened, and every other worked.
  bool opened = false;
  for (const CudaDevice& d : r->devices) {
    if (!d.ctx_skipped.empty()) continue;
    if (d.ctx_rc != 0) return false;
    opened = true;
  }
  return opened;
}

std::optional<DriverVersion> kernel_driver_version(const Snapshot& s) {
  return parse_driver_version(s.driver.version);
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::string pci_id_text(const PciDevice& d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", d.vendor_id, d.device_id);
  return buf;
}

std::string gpu_name(const Snapshot& s, const PciDevice& d) {
  if (!d.proc_model.empty()) return d.proc_model;
  if (const NvmlGpu* g = nvml_gpu_by_bdf(s, d.bdf); g != nullptr && g->name.ok()) {
    return g->name.value;
  }
  if (const GpuModel* m = find_gpu_model(d.device_id)) return m->name;
  return "";
}

std::string gpu_label(const Snapshot& s, const PciDevice& d) {
  std::string name = gpu_name(s, d);
  std::string out = d.bdf;
  if (!name.empty()) out += " " + name;
  return out + " (" + pci_id_text(d) + ")";
}

GpuArch gpu_arch(const Snapshot& s, const PciDevice& d) {
  if (const GpuModel* m = find_gpu_model(d.device_id)) return m->arch;
  if (const NvmlGpu* g = nvml_gpu_by_bdf(s, d.bdf)) {
    if (g->architecture.ok()) {
      GpuArch a = arch_from_nvml(g->architecture.value);
      if (a != GpuArch::kUnknown) return a;
    }
    if (g->cc_major.ok() && g->cc_minor.ok()) {
      return arch_from_cc(g->cc_major.value, g->cc_minor.value);
    }
  }
  return GpuArch::kUnknown;
}

std::optional<std::string> library_file_version(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t so = file.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  std::string_view ver = file.substr(so + 4);
  // A driver version has a branch of three digits and at least two parts;
  // "1" (soname) and "12" (cudart major) are not driver versions.
  auto parsed = parse_driver_version(ver);
  if (!parsed || parsed->major < 100) return std::nullopt;
  return std::string(ver);
}

bool is_gpu_node(std::string_view path) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (!path.starts_with(kPrefix) || path.size() == kPrefix.size()) return false;
  return std::all_of(path.begin() + static_cast<long>(kPrefix.size()), path.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> driver_capability_list(const std::string& value) {
  std::vector<std::string> list;
  for (auto& c : split_strings(value, ',')) {
    std::string t = ascii_lower(trim_isspace(c));
    if (!t.empty()) list.push_back(t);
  }
  return list;
}

bool driver_capability(const Snapshot& s, std::string_view cap) {
  const std::string* caps = env_var(s, "NVIDIA_DRIVER_CAPABILITIES");
  if (caps == nullptr) return cap == "compute" || cap == "utility";
  for (const std::string& c : driver_capability_list(*caps)) {
    if (c == "all" || c == cap) return true;
  }
  return false;
}

std::string dir_name(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string ld_library_path_command(const std::string& new_value) {
  if (new_value.empty()) return "unset LD_LIBRARY_PATH";
  return "export LD_LIBRARY_PATH=" + new_value;
}

bool run_has_rc(const CudaRun* r, int code) { return r != nullptr && run_failed_with(*r, code); }

std::string framework_error_text(int cudart_rc) {
  const CudaErrorInfo* e = find_cuda_error(cudart_rc);
  std::string text = "Error " + std::to_string(cudart_rc);
  if (e != nullptr && e->runtime_string != nullptr) text += std::string(": ") + e->runtime_string;
  return text;
}

std::string runtime_name_suffix(int cudart_rc) {
  const CudaErrorInfo* e = find_cuda_error(cudart_rc);
  if (e == nullptr || e->runtime_name == nullptr) return "";
  return std::string(" [") + e->runtime_name + "]";
}

std::vector<std::string> cuda_error_lines(const CudaRun& r) {
  std::vector<std::string> out;
  if (!r.cudart_loaded.empty() && r.cudart_rc > 0) {
    out.push_back("cudaGetDeviceCount (" + r.cudart_loaded +
                  "): " + framework_error_text(r.cudart_rc) + runtime_name_suffix(r.cudart_rc));
  }
  if (r.init_rc > 0) {
    out.push_back("cuInit(0) (" + r.library_loaded + "): " + cuda_driver_error(r.init_rc));
  } else if (r.init_rc == 0 && r.device_count_rc > 0) {
    out.push_back("cuDeviceGetCount: " + cuda_driver_error(r.device_count_rc));
  }
  return out;
}

std::vector<KnownMinor> known_gpu_minors(const Snapshot& s) {
  std::vector<KnownMinor> out;
  auto add = [&](int minor, const std::string& bdf) {
    for (const auto& k : out) {
      if (k.minor == minor) return;
    }
    out.push_back({minor, bdf});
  };
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kGpu && d.proc_minor && *d.proc_minor >= 0 && *d.proc_minor <= 254) {
      add(*d.proc_minor, d.bdf);
    }
  }
  for (const auto& g : s.nvml.gpus) {
    if (g.minor_number.ok() && g.minor_number.value <= 254) {
      add(static_cast<int>(g.minor_number.value), g.pci_bus_id.ok() ? g.pci_bus_id.value : "");
    }
  }
  std::sort(out.begin(), out.end(),
            [](const KnownMinor& a, const KnownMinor& b) { return a.minor < b.minor; });
  return out;
}

std::string format_seconds(double seconds) {
  if (seconds < 0) seconds = 0;
  long total = static_cast<long>(seconds);
  if (total < 60) return std::to_string(total) + " s";
  long minutes = total / 60;
  if (minutes < 60) return std::to_string(minutes) + " min";
  long hours = minutes / 60;
  if (hours < 48) return std::to_string(hours) + " h " + std::to_string(minutes % 60) + " min";
  return std::to_string(hours / 24) + " days";
}

bool child_timed_out(const std::string& child_error) {
  return child_error.rfind("timeout", 0) == 0;
}

std::string deadline_text(const Snapshot& s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s.deadline_s);
  return buf;
}

bool is_stub_dir(std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return dir.find("/stubs/") != std::string_view::npos || dir.ends_with("/stubs") || dir == "stubs";
}

bool is_compat_dir(std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return dir.find("/compat/") != std::string_view::npos || dir.ends_with("/compat");
}

std::string module_version(const Snapshot& s, std::string* from) {
  if (!s.driver.version.empty()) {
    *from = "/proc/driver/nvidia/version";
    return s.driver.version;
  }
  if (s.nvml.driver_version.ok() && !s.nvml.driver_version.value.empty()) {
    *from = "NVML (/proc/driver/nvidia/version was not read)";
    return s.nvml.driver_version.value;
  }
  from->clear();
  return "";
}

}  // namespace gd
