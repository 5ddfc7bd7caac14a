#include "facts/query.h"

#include <algorithm>

namespace gd {

std::vector<const PciDevice*> pci_gpus(const Snapshot& s) {
  std::vector<const PciDevice*> out;
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kGpu) out.push_back(&d);
  }
  return out;
}

const NvmlGpu* find_nvml_gpu(const Snapshot& s, const std::string& bdf) {
  for (const auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.ok() && g.pci_bus_id.value == bdf) return &g;
  }
  return nullptr;
}

const PciBridge* find_pci_bridge(const Snapshot& s, const std::string& bdf) {
  if (bdf.empty()) return nullptr;
  for (const auto& b : s.pci_bridges) {
    if (b.bdf == bdf) return &b;
  }
  return nullptr;
}

bool has_nvswitch(const Snapshot& s) {
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kNvSwitch) return true;
  }
  return false;
}

static const CudaRun* run_labeled(const Snapshot& s, const char* label) {
  for (const auto& r : s.cuda.runs) {
    if (r.label == label) return &r;
  }
  return nullptr;
}

const CudaRun* user_cuda_run(const Snapshot& s) { return run_labeled(s, "user"); }

const CudaRun* clean_cuda_run(const Snapshot& s) { return run_labeled(s, "clean"); }

const CudaRun* raised_limit_cuda_run(const Snapshot& s) {
  return run_labeled(s, kRaisedLimitLabel);
}

const FieldGap* field_gap(const Snapshot& s, std::string_view field) {
  for (const auto& p : s.probes) {
    for (const auto& g : p.gaps) {
      if (g.field == field) return &g;
    }
  }
  return nullptr;
}

bool cuda_failed(const Snapshot& s) {
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr) return false;
  if (!r->child_error.empty()) return true;
  if (!r->library_loaded.empty() && r->init_rc != 0) return true;
  if (r->init_rc == 0 && r->device_count_rc != 0) return true;
  if (!r->cudart_loaded.empty() && r->cudart_rc != 0) return true;
  return false;
}

int cuda_user_error(const Snapshot& s) {
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr) return 0;
  if (!r->cudart_loaded.empty() && r->cudart_rc > 0) return r->cudart_rc;
  if (r->init_rc > 0) return r->init_rc;
  if (r->device_count_rc > 0) return r->device_count_rc;
  return 0;
}

const ModuleInfo* find_module(const Snapshot& s, const std::string& name) {
  for (const auto& m : s.driver.modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const DevNode* find_devnode(const Snapshot& s, const std::string& path) {
  for (const auto& n : s.devnodes) {
    if (n.path == path) return &n;
  }
  return nullptr;
}

const ServiceInfo* find_service(const Snapshot& s, const std::string& name) {
  for (const auto& v : s.services) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

bool program_running(const Snapshot& s, const std::string& name) {
  constexpr size_t kCommLen = 15;  // TASK_COMM_LEN - 1
  if (const ServiceInfo* svc = find_service(s, name)) return svc->running;
  std::string comm = name.substr(0, kCommLen);
  return std::any_of(s.processes.begin(), s.processes.end(),
                     [&](const ProcessInfo& p) { return p.comm == comm; });
}

const std::string* env_var(const Snapshot& s, const std::string& name) {
  auto it = s.env.vars.find(name);
  return it == s.env.vars.end() ? nullptr : &it->second;
}

}  // namespace gd
