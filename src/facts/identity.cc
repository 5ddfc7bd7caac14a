#include "facts/identity.h"

#include <algorithm>
#include <set>

#include "facts/query.h"
#include "util/text.h"

namespace gd {
namespace {

// 12040 -> "12.4" (nvidia-facts.md: major*1000 + minor*10).
std::string cuda_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Whether the snapshot tells what probe `name` would have seen: not when
// explain never saw that source, nor when the probe failed or hung. A probe
// that found its source absent ("unavailable": no /proc/driver/nvidia) did
// see something: that the source is not there.
bool observed(const Snapshot& s, const std::string& name) {
  if (std::find(s.unobserved.begin(), s.unobserved.end(), name) != s.unobserved.end()) {
    return false;
  }
  for (const auto& p : s.probes) {
    if (p.name == name)
      return p.status == ProbeStatus::kOk || p.status == ProbeStatus::kUnavailable;
  }
  return true;
}

std::string persistence_text(const Snapshot& s) {
  int known = 0, on = 0;
  for (const auto& g : s.nvml.gpus) {
    if (!g.persistence_mode.ok()) continue;
    ++known;
    if (g.persistence_mode.value == 1) ++on;
  }
  if (known == 0) return "";
  if (on == known) return "on";
  if (on == 0) return "off";
  return "on " + std::to_string(on) + "/" + std::to_string(known);
}

// "8x NVIDIA H100 80GB HBM3", or "4x A, 4x B" on a mixed node: the model of
// each GPU on the PCI bus, by NVML's name where NVML answered for that bus id.
std::string gpus_by_model_text(const Snapshot& s) {
  std::map<std::string, int> counts;
  for (const auto* d : pci_gpus(s)) {
    std::string model = d->proc_model;
    for (const auto& g : s.nvml.gpus) {
      if (g.pci_bus_id.ok() && g.pci_bus_id.value == d->bdf && g.name.ok()) model = g.name.value;
    }
    ++counts[model.empty() ? "unknown model" : model];
  }
  std::string out;
  for (const auto& [model, n] : counts) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + model;
  }
  return out;
}

std::string iommu_text(const IommuInfo& i) {
  if (!i.known) return "";
  if (!i.enabled) return "off";
  return i.passthrough ? "on passthrough" : "on";
}

}  // namespace

NodeIdentity node_identity(const Snapshot& s) {
  NodeIdentity id;
  id.driver_version = s.driver.version;
  if (id.driver_version.empty() && s.nvml.driver_version.ok()) {
    id.driver_version = s.nvml.driver_version.value;
  }
  if (s.nvml.cuda_driver_version.ok())
    id.cuda_version = cuda_text(s.nvml.cuda_driver_version.value);
  std::set<std::string> models, vbios;
  for (const auto& g : s.nvml.gpus) {
    if (g.name.ok()) models.insert(g.name.value);
    if (g.vbios_version.ok()) vbios.insert(g.vbios_version.value);
  }
  for (const auto& d : s.pci) {
    if (d.kind != PciKind::kGpu) continue;
    ++id.gpu_count;
    // Without NVML the driver's own name for the board still tells the model.
    if (s.nvml.gpus.empty() && !d.proc_model.empty()) models.insert(d.proc_model);
  }
  id.gpu_model = join_skip_leading_empty(models, ",");
  id.vbios = join_skip_leading_empty(vbios, ",");
  if (!has_nvswitch(s)) {
    id.fabric_manager = "n/a";
  } else if (const ServiceInfo* fm = find_service(s, "nv-fabricmanager"); fm && fm->running) {
    id.fabric_manager = fm->version.empty() ? "running" : "running " + fm->version;
  } else {
    id.fabric_manager = "not running";
  }
  auto cvd = s.env.vars.find("CUDA_VISIBLE_DEVICES");
  if (cvd != s.env.vars.end()) id.cuda_visible_devices = cvd->second;

  if (s.nvml.driver_version.ok()) id.driver_library = s.nvml.driver_version.value;
  if (!s.driver.version_line.empty()) {
    id.kernel_module = s.driver.open_kernel_module ? "open" : "proprietary";
  }
  if (observed(s, "driver")) {
    id.nvidia_uvm = find_module(s, "nvidia_uvm") != nullptr ? "loaded" : "not loaded";
    id.module_params = s.driver.params;
    id.module_params_known = true;
  }
  id.persistence_mode = persistence_text(s);
  if (observed(s, "services") && !s.services.empty()) {
    const ServiceInfo* pd = find_service(s, "nvidia-persistenced");
    id.persistenced = pd != nullptr && pd->running ? "running" : "not running";
  }
  if (observed(s, "pci")) id.gpus_by_model = gpus_by_model_text(s);
  if (const std::string* order = env_var(s, "CUDA_DEVICE_ORDER")) id.cuda_device_order = *order;
  if (observed(s, "container")) {
    if (!s.container.in_container) {
      id.container = "none";
    } else {
      id.container = s.container.runtime.empty() ? "container" : s.container.runtime;
    }
  }
  if (observed(s, "iommu")) {
    id.iommu = iommu_text(s.iommu);
    id.iommu_cmdline = s.iommu.cmdline_flags;
  }
  return id;
}

std::vector<std::pair<std::string, std::string>> identity_fields(const NodeIdentity& id) {
  return {{"driver", id.driver_version},
          {"cuda", id.cuda_version},
          {"gpu_model", id.gpu_model},
          {"gpu_count", std::to_string(id.gpu_count)},
          {"vbios", id.vbios},
          {"fabric_manager", id.fabric_manager},
          {"cuda_visible_devices", id.cuda_visible_devices}};
}

std::vector<std::pair<std::string, std::string>> drift_fields(const NodeIdentity& id) {
  auto out = identity_fields(id);
  out.insert(out.end(), {{"driver_library", id.driver_library},
                         {"kernel_module", id.kernel_module},
                         {"nvidia_uvm", id.nvidia_uvm},
                         {"persistence_mode", id.persistence_mode},
                         {"persistenced", id.persistenced},
                         {"gpus_by_model", id.gpus_by_model},
                         {"cuda_device_order", id.cuda_device_order},
                         {"container", id.container},
                         {"iommu", id.iommu},
                         {"iommu_cmdline", id.iommu_cmdline}});
  for (auto& [name, value] : out) {
    if (!value.empty()) continue;
    if (name == "cuda_visible_devices" || name == "cuda_device_order") {
      value = "unset";
    } else if (name == "iommu_cmdline" && !id.iommu.empty()) {
      value = "none";
    } else {
      value = "unknown";
    }
  }
  // An empty parameter value is the module's own (`RegistryDwords: ""`):
  // shown as the file shows it.
  for (const auto& [name, value] : id.module_params) {
    out.emplace_back("nvidia." + name, value.empty() ? "\"\"" : value);
  }
  return out;
}

}  // namespace gd
