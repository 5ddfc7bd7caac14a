// pcie.link-degraded: a GPU's PCIe link trained below what the GPU and its
// slot can do. From sysfs (works without NVML) and NVML where it answered.
//
// Width is the signal: a link trains its width once, at boot, and a narrower
// one (x4 on a x16 GPU) means a riser, a dirty or shared slot, or a BIOS
// bifurcation setting. Speed is not, on its own: GPUs lower their link speed
// when idle to save power (a 4090 at rest shows 2.5 GT/s of 16), so a low
// speed counts only while NVML shows the GPU busy (Config::
// pcie_load_utilization_pct).
//
// What the link can reach is the narrower of the GPU's own maximum
// (sysfs max_link_width of the GPU, its LnkCap) and the port above it (the
// root port or switch port's max_link_width); NVML's "max" is already that
// system maximum (nvmlDeviceGetMaxPcieLinkWidth: "a x16 device in a x8 slot
// reports 8"). Below the GPU's maximum only because the slot is narrower is
// info ("the slot is x8"), not a fault.
//
// Severity: warn at every width. A narrow link slows host<->GPU copies but
// does not stop the GPU, so it does not make the node unfit on its own; when
// the link is also failing, pcie.errors and Xid 79 say so. When sysfs and
// NVML disagree about the current width, the narrower counts (both read the
// same Link Status register; a disagreement means it changed in between).
#include <fmt/format.h>

#include <algorithm>

#include "catalog/gpu_perf.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

namespace {

// min over the known (> 0) values; 0 when none is known.
template <class T>
T known_min(std::initializer_list<T> v) {
  T out = 0;
  for (T x : v) {
    if (x > 0 && (out == 0 || x < out)) out = x;
  }
  return out;
}

std::string gts(double v) { return v > 0 ? fmt::format("{:.1f} GT/s", v) : "unknown"; }
std::string lanes(int v) { return v > 0 ? fmt::format("x{}", v) : "unknown"; }

// One GPU's link, from every source that answered.
struct Link {
  int width = 0;           // current lanes, the narrower of sysfs and NVML
  int gpu_max_width = 0;   // the GPU's own maximum (sysfs), else NVML's
  int slot_max_width = 0;  // what the port above / the system allows (0 unknown)
  double speed = 0;        // current GT/s
  double gpu_max_speed = 0;
  double slot_max_speed = 0;
  std::optional<uint32_t> utilization_pct;  // NVML
  std::vector<std::string> evidence;
};

Link read_link(const Snapshot& s, const PciDevice& d) {
  Link l;
  const PciBridge* port = find_pci_bridge(s, d.parent);
  const NvmlGpu* g = find_nvml_gpu(s, d.bdf);
  const NvmlHealth* h = g ? &g->health : nullptr;
  int nvml_width = h && h->pcie_link_width.ok() ? static_cast<int>(h->pcie_link_width.value) : 0;
  int nvml_max_width =
      h && h->pcie_link_width_max.ok() ? static_cast<int>(h->pcie_link_width_max.value) : 0;
  double nvml_speed = h && h->pcie_link_gen.ok() ? pcie_gen_gts(h->pcie_link_gen.value) : 0;
  double nvml_max_speed =
      h && h->pcie_link_gen_max.ok() ? pcie_gen_gts(h->pcie_link_gen_max.value) : 0;
  if (h && h->utilization_gpu_pct.ok()) l.utilization_pct = h->utilization_gpu_pct.value;

  l.width = known_min({d.current_link_width, nvml_width});
  l.gpu_max_width = d.max_link_width > 0 ? d.max_link_width : nvml_max_width;
  l.slot_max_width = known_min({port ? port->max_link_width : 0, nvml_max_width, l.gpu_max_width});
  l.speed = known_min({d.current_link_speed_gts, nvml_speed});
  l.gpu_max_speed = d.max_link_speed_gts > 0 ? d.max_link_speed_gts : nvml_max_speed;
  l.slot_max_speed =
      known_min({port ? port->max_link_speed_gts : 0.0, nvml_max_speed, l.gpu_max_speed});

  l.evidence.push_back(fmt::format(
      "{}: sysfs current_link_width {}, max_link_width {}; current_link_speed {}, max {}", d.bdf,
      d.current_link_width, d.max_link_width, gts(d.current_link_speed_gts),
      gts(d.max_link_speed_gts)));
  if (port != nullptr) {
    l.evidence.push_back(fmt::format(
        "  port above it {} [{:04x}:{:04x}]: max_link_width {}, max_link_speed {}", port->bdf,
        port->vendor_id, port->device_id, port->max_link_width, gts(port->max_link_speed_gts)));
  }
  if (h != nullptr && (h->pcie_link_width.ok() || h->pcie_link_gen.ok())) {
    l.evidence.push_back(
        fmt::format("  NVML: width {} of {}, generation {} of {}, utilization {}",
                    h->pcie_link_width.ok() ? lanes(nvml_width) : "?",
                    h->pcie_link_width_max.ok() ? lanes(nvml_max_width) : "?",
                    h->pcie_link_gen.ok() ? std::to_string(h->pcie_link_gen.value) : "?",
                    h->pcie_link_gen_max.ok() ? std::to_string(h->pcie_link_gen_max.value) : "?",
                    l.utilization_pct ? std::to_string(*l.utilization_pct) + " %" : "unknown"));
  }
  return l;
}

}  // namespace

std::vector<Finding> check_pcie_link(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "pcie.link-degraded";
  std::vector<const PciDevice*> gpus = pci_gpus(s);
  if (gpus.empty()) return not_applicable(kId, "No NVIDIA GPU on the PCI bus.");
  std::vector<Finding> out;
  struct SlotLimited {
    std::string bdf, what;
    std::vector<std::string> evidence;
    std::vector<Comparison> comparisons;
  };
  std::vector<SlotLimited> slot_limited;
  std::vector<Comparison> healthy;  // the links at full width, for the ok finding
  int judged = 0, idle_slow = 0, unknown_load_slow = 0;
  for (const PciDevice* d : gpus) {
    Link l = read_link(s, *d);
    if (l.width <= 0 && l.speed <= 0) continue;  // link down or not readable: nothing to judge
    ++judged;
    bool busy = l.utilization_pct && *l.utilization_pct >= static_cast<uint32_t>(std::max(
                                                               0, c.pcie_load_utilization_pct));
    Finding f = make_finding(kId, Severity::kOk, "");
    f.gpus = {d->bdf};
    std::vector<std::string> what;
    // The requirements judged, width against width and (busy) speed against
    // speed; the verdict is whether one is unmet.
    std::vector<Comparison> cmps;
    if (l.width > 0 && l.slot_max_width > 0) {
      cmps.push_back(compare_numbers(
          d->bdf + " PCIe link width (lanes) vs the most the GPU and its slot allow", l.width,
          ">=", l.slot_max_width));
      if (!cmps.back().met) {
        f.severity = Severity::kWarn;
        what.push_back(fmt::format("runs at {} of {}", lanes(l.width), lanes(l.slot_max_width)));
      }
    }
    if (l.speed > 0 && l.slot_max_speed > 0 && l.speed < l.slot_max_speed) {
      if (busy) {
        cmps.push_back(compare_numbers(
            fmt::format("{} PCIe link speed (GT/s) at {} % utilization vs the most the GPU and "
                        "its slot allow",
                        d->bdf, *l.utilization_pct),
            l.speed, ">=", l.slot_max_speed));
        f.severity = Severity::kWarn;
        what.push_back(fmt::format("runs at {} of {} while {} % busy", gts(l.speed),
                                   gts(l.slot_max_speed), *l.utilization_pct));
      } else if (l.utilization_pct) {
        ++idle_slow;
      } else {
        ++unknown_load_slow;
      }
    }
    if (f.severity == Severity::kWarn) {
      f.summary = fmt::format("GPU {}'s PCIe link {}: host<->GPU transfers are slower", d->bdf,
                              join(what, " and "));
      f.evidence = l.evidence;
      for (auto& x : cmps) add_comparison(&f, std::move(x));
      f.remedy = {
          fmt::format("Check the link: sudo lspci -vv -s {} | grep -e LnkCap -e LnkSta", d->bdf),
          "Reseat the GPU and any riser or cable; try another slot.",
          "Check the board manual: slots that share lanes drop to x8/x4 when a neighbouring "
          "slot or M.2 socket is in use; set the slot's width/bifurcation to x16 and its PCIe "
          "speed to Auto in the BIOS.",
      };
      out.push_back(std::move(f));
      continue;
    }
    // Narrower or slower only because the slot is: worth knowing, not a fault.
    std::vector<std::string> slot;
    if (l.gpu_max_width > 0 && l.slot_max_width > 0 && l.slot_max_width < l.gpu_max_width) {
      slot.push_back(
          fmt::format("{} (the GPU can do {})", lanes(l.slot_max_width), lanes(l.gpu_max_width)));
    }
    if (l.gpu_max_speed > 0 && l.slot_max_speed > 0 && l.slot_max_speed < l.gpu_max_speed) {
      slot.push_back(
          fmt::format("{} (the GPU can do {})", gts(l.slot_max_speed), gts(l.gpu_max_speed)));
    }
    if (!slot.empty()) {
      slot_limited.push_back({d->bdf, join(slot, " and "), l.evidence, cmps});
    } else {
      healthy.insert(healthy.end(), cmps.begin(), cmps.end());
    }
  }
  if (judged == 0) {
    return not_applicable(kId, "No GPU's PCIe link width or speed could be read.");
  }
  if (!slot_limited.empty()) {
    // One finding for all of them: a board's slots are usually alike.
    bool alike = std::all_of(slot_limited.begin(), slot_limited.end(),
                             [&](const SlotLimited& x) { return x.what == slot_limited[0].what; });
    std::vector<std::string> each;
    Finding f = make_finding(kId, Severity::kInfo, "");
    for (const auto& x : slot_limited) {
      f.gpus.push_back(x.bdf);
      each.push_back(x.bdf + ": " + x.what);
      f.evidence.insert(f.evidence.end(), x.evidence.begin(), x.evidence.end());
      for (const auto& cmp : x.comparisons) add_comparison(&f, cmp);
    }
    size_t n = slot_limited.size();
    f.summary = fmt::format(
        "{} GPU{} {} in a slot of {}: the link runs as wide and fast as the slot allows", n,
        n == 1 ? "" : "s", n == 1 ? "sits" : "sit",
        alike ? slot_limited[0].what : "less than the GPU can do (" + join(each, "; ") + ")");
    f.remedy = {
        "Nothing is broken. If host<->GPU bandwidth matters, move the GPU to a slot "
        "wired for its full width and speed."};
    out.push_back(std::move(f));
  }
  if (!out.empty()) return out;
  std::string summary = fmt::format("{} GPU link{} at full width", judged, judged == 1 ? "" : "s");
  if (idle_slow > 0) {
    summary += fmt::format(
        "; {} idle GPU{} run{} below full link speed, which is normal power "
        "saving (speed counts only at {} % utilization or more)",
        idle_slow, idle_slow == 1 ? "" : "s", idle_slow == 1 ? "s" : "",
        c.pcie_load_utilization_pct);
  }
  if (unknown_load_slow > 0) {
    summary += fmt::format(
        "; {} GPU{} below full link speed with no utilization reading "
        "(NVML), so it cannot be told from idle power saving",
        unknown_load_slow, unknown_load_slow == 1 ? "" : "s");
  }
  Finding ok = make_finding(kId, Severity::kOk, summary + ".");
  for (auto& x : healthy) add_comparison(&ok, std::move(x));
  if (healthy.empty()) {
    add_not_compared(&ok, "PCIe link width vs the most the GPU and its slot allow",
                     "every GPU's current or maximum link width");
  }
  return {ok};
}

}  // namespace gd
