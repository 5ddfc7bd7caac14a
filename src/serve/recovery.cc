// The recovery gate (recovery.h).
#include "serve/recovery.h"

#include <set>

#include "facts/health.h"

namespace gd {

GpuHealth& RecoveryGate::entry(const std::string& bus) {
  GpuHealth& g = gpus_[bus];
  g.bus_id = bus;
  return g;
}

void RecoveryGate::turn_unhealthy(GpuHealth& g, const std::string& cause, int64_t now_ms) {
  if (g.healthy) {
    g.healthy = false;
    g.unhealthy_since_ms = now_ms;
  }
  g.cause = cause;
  g.cleared = false;
}

void RecoveryGate::on_sample(const NvmlInfo& sample, uint64_t sampler_generation, int64_t now_ms) {
  for (const NvmlGpu& s : sample.gpus) {
    std::string bus = s.pci_bus_id.ok() ? s.pci_bus_id.value : "";
    if (bus.empty()) {
      // A GPU lost before the sampler read its identity: known by its index.
      for (const auto& [b, g] : gpus_) {
        if (g.index == static_cast<int>(s.index)) bus = b;
      }
      if (bus.empty()) continue;
    }
    GpuHealth& g = entry(bus);
    g.index = static_cast<int>(s.index);
    if (s.uuid.ok()) g.uuid = s.uuid.value;
    auto trust = trust_from_generation_.find(bus);
    if (trust != trust_from_generation_.end() && sampler_generation < trust->second) continue;
    if (nvml_gpu_down(s)) turn_unhealthy(g, "NVML: the GPU does not answer (sampler)", now_ms);
  }
}

std::vector<std::string> RecoveryGate::on_check(const Report& report, const Snapshot& snapshot,
                                                int64_t now_ms) {
  std::map<std::string, std::string> failing;  // bus id -> the first failing finding's id
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::kFail) continue;
    for (const std::string& bus : f.gpus) failing.emplace(bus, f.id);
  }
  std::set<std::string> answering;
  for (const NvmlGpu& n : snapshot.nvml.gpus) {
    if (!n.pci_bus_id.ok()) continue;
    GpuHealth& g = entry(n.pci_bus_id.value);
    g.index = static_cast<int>(n.index);
    if (n.uuid.ok()) g.uuid = n.uuid.value;
    if (!nvml_gpu_down(n)) answering.insert(n.pci_bus_id.value);
  }
  std::vector<std::string> due;
  for (const auto& [bus, id] : failing) turn_unhealthy(entry(bus), id, now_ms);
  for (auto& [bus, g] : gpus_) {
    if (g.healthy || failing.count(bus) != 0) continue;
    g.cleared = answering.count(bus) != 0;
    if (g.cleared) due.push_back(bus);
  }
  return due;
}

bool RecoveryGate::on_reprobe(const ReprobeResult& r, uint64_t sampler_generation, int64_t now_ms) {
  auto it = gpus_.find(r.bus_id);
  if (it == gpus_.end()) return false;
  GpuHealth& g = it->second;
  g.last_reprobe = reprobe_line(r);
  if (!r.ok) {
    ++g.reprobe_failures;
    return false;
  }
  ++g.reprobe_passes;
  if (g.healthy || !g.cleared) return false;
  g.healthy = true;
  g.cleared = false;
  g.cause.clear();
  ++g.recovered;
  g.last_recovery_s = static_cast<double>(now_ms - g.unhealthy_since_ms) / 1000.0;
  trust_from_generation_[r.bus_id] = sampler_generation + 1;
  return true;
}

std::vector<GpuHealth> RecoveryGate::gpus() const {
  std::vector<GpuHealth> out;
  for (const auto& [bus, g] : gpus_) out.push_back(g);
  return out;
}

}  // namespace gd
