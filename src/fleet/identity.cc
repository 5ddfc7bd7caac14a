#include "fleet/identity.h"

#include <set>

#include "checks/util.h"

namespace gd {
namespace {

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// 12040 -> "12.4" (nvidia-facts.md: major*1000 + minor*10).
std::string cuda_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

NodeIdentity node_identity(const Snapshot& s) {
  NodeIdentity id;
  id.driver_version = s.driver.version;
  if (id.driver_version.empty() && s.nvml.driver_version.ok()) {
    id.driver_version = s.nvml.driver_version.value;
  }
  if (s.nvml.cuda_driver_version.ok()) id.cuda_version = cuda_text(s.nvml.cuda_driver_version.value);
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
  id.gpu_model = join(models);
  id.vbios = join(vbios);
  if (!has_nvswitch(s)) {
    id.fabric_manager = "n/a";
  } else if (const ServiceInfo* fm = find_service(s, "nv-fabricmanager"); fm && fm->running) {
    id.fabric_manager = fm->version.empty() ? "running" : "running " + fm->version;
  } else {
    id.fabric_manager = "not running";
  }
  auto cvd = s.env.vars.find("CUDA_VISIBLE_DEVICES");
  if (cvd != s.env.vars.end()) id.cuda_visible_devices = cvd->second;
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

}  // namespace gd
