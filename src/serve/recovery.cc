// The recovery gate (recovery.h).
#include "serve/recovery.h"

#include <algorithm>
#include <set>

#include "facts/health.h"
#include "util/time.h"

namespace gd {

namespace {

// A hold or window as the flags spell it: "10m", "1h", "90s", "0.5s".
std::string duration_text(int64_t ms) {
  if (ms > 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms > 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return seconds_1dp(static_cast<double>(ms) / 1000.0) + "s";
}

}  // namespace

GpuHealth& RecoveryGate::entry(const std::string& bus) {
  GpuHealth& g = gpus_[bus];
  g.bus_id = bus;
  return g;
}

void RecoveryGate::turn_unhealthy(GpuHealth& g, const std::string& cause, int64_t now_ms) {
  if (g.healthy) {
    g.healthy = false;
    g.unhealthy_since_ms = now_ms;
    Returns& r = returns_[g.bus_id];
    // Calm for a whole longest hold: the next episode starts at the first hold again.
    if (r.healthy_since_ms != 0 && now_ms - r.healthy_since_ms >= flap_.max_hold_ms) {
      r.episodes = 0;
    }
  }
  g.cleared = false;
  if (g.flapping) {
    // Lost again while held: the hold starts over, so only a whole hold
    // without a loss counts as stable.
    g.held_until_ms = std::max(g.held_until_ms, now_ms + g.hold_ms);
    g.cause = "flapping: " + cause;
    return;
  }
  g.cause = cause;
}

bool RecoveryGate::admit(GpuHealth& g, int64_t now_ms) {
  Returns& r = returns_[g.bus_id];
  if (g.flapping) {
    // A re-probe that passed after a whole hold: stable; its count starts afresh.
    g.flapping = false;
    r.at_ms.clear();
    r.healthy_since_ms = now_ms;
    return true;
  }
  std::erase_if(r.at_ms, [&](int64_t t) { return now_ms - t >= flap_.window_ms; });
  r.at_ms.push_back(now_ms);
  if (flap_.returns <= 0 || static_cast<int>(r.at_ms.size()) < flap_.returns) {
    r.healthy_since_ms = now_ms;
    return true;
  }
  ++r.episodes;
  ++g.flaps;
  g.flapping = true;
  g.hold_ms = flap_.hold_ms;
  for (int i = 1; i < r.episodes && g.hold_ms < flap_.max_hold_ms; ++i) g.hold_ms *= 2;
  g.hold_ms = std::min(g.hold_ms, flap_.max_hold_ms);
  g.held_until_ms = now_ms + g.hold_ms;
  g.cause = "flapping: back " + std::to_string(r.at_ms.size()) + " times within " +
            duration_text(flap_.window_ms) + "; held " + duration_text(g.hold_ms) +
            " without a loss";
  g.cleared = false;
  return false;
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
    if (answering.count(bus) == 0) {
      // Lost again while held (no sample saw it): the hold starts over.
      if (g.flapping) g.held_until_ms = std::max(g.held_until_ms, now_ms + g.hold_ms);
      g.cleared = false;
      continue;
    }
    // A flapping GPU is re-probed only after its hold.
    g.cleared = !g.flapping || now_ms >= g.held_until_ms;
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
  if (g.healthy) return false;
  // A fresh NVML child answered for it: the sampler child of before, which
  // may hold the lost handle, is trusted no more, whether the GPU is
  // admitted, held, or not cleared any longer (else its stale "lost",
  // sampled while a slow re-probe ran, would undo every re-probe for ever).
  uint64_t& trust = trust_from_generation_[r.bus_id];
  trust = std::max(trust, sampler_generation + 1);  // never back to an older child
  if (!g.cleared) return false;                     // the next check decides again
  if (!admit(g, now_ms)) return false;
  g.healthy = true;
  g.cleared = false;
  g.cause.clear();
  ++g.recovered;
  g.last_recovery_s = static_cast<double>(now_ms - g.unhealthy_since_ms) / 1000.0;
  return true;
}

std::vector<GpuHealth> RecoveryGate::gpus() const {
  std::vector<GpuHealth> out;
  for (const auto& [bus, g] : gpus_) out.push_back(g);
  return out;
}

}  // namespace gd
