#include "diag/outliers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "checks/util.h"

namespace gd {

namespace {

const PciDevice* pci_device(const Snapshot& s, const std::string& bdf) {
  for (const auto& d : s.pci) {
    if (d.bdf == bdf) return &d;
  }
  return nullptr;
}

// The smallest known (> 0) value; 0 when none is known.
double known_min(std::initializer_list<double> v) {
  double out = 0;
  for (double x : v) {
    if (x > 0 && (out == 0 || x < out)) out = x;
  }
  return out;
}

// The bridges above a GPU, root port first (bounded: a looping snapshot
// must not loop here).
std::vector<std::string> chain_of(const Snapshot& s, const PciDevice& d) {
  std::vector<std::string> up;
  std::string at = d.parent;
  while (!at.empty() && up.size() < 32) {
    const PciBridge* b = find_pci_bridge(s, at);
    if (b == nullptr) break;
    up.push_back(b->bdf);
    at = b->parent;
  }
  std::reverse(up.begin(), up.end());
  return up;
}

bool is_nvswitch(const Snapshot& s, const std::string& bdf) {
  const PciDevice* d = pci_device(s, bdf);
  return d != nullptr && d->kind == PciKind::kNvSwitch;
}

struct NvLinkCount {
  bool known = false;  // NVML listed the GPU's links
  int total = 0;       // links the GPU has
  int to_peer = 0;     // active, to the other GPU
  int to_switch = 0;   // active, to an NVSwitch
};

NvLinkCount count_links(const Snapshot& s, const std::string& src, const std::string& dst) {
  NvLinkCount c;
  const NvmlGpu* g = find_nvml_gpu(s, src);
  if (g == nullptr || !g->health.nvlinks.ok() || g->health.nvlinks.value.empty()) return c;
  c.known = true;
  for (const auto& l : g->health.nvlinks.value) {
    ++c.total;
    if (!l.active.ok() || l.active.value != 1 || !l.remote_bus_id.ok()) continue;
    if (l.remote_bus_id.value == dst) ++c.to_peer;
    if (is_nvswitch(s, l.remote_bus_id.value)) ++c.to_switch;
  }
  return c;
}

// NVML topology level of two GPUs (nvmlGpuTopologyLevel_t); -1 unknown.
int topo_level(const Snapshot& s, const std::string& a, const std::string& b) {
  const NvmlGpu* ga = find_nvml_gpu(s, a);
  const NvmlGpu* gb = find_nvml_gpu(s, b);
  if (ga == nullptr || gb == nullptr) return -1;
  for (const auto& p : s.nvml.topology) {
    bool match = (p.a == ga->index && p.b == gb->index) || (p.a == gb->index && p.b == ga->index);
    if (match && p.level.ok()) return p.level.value;
  }
  return -1;
}

const char* kind_name(PathKind k) {
  switch (k) {
    case PathKind::kNvSwitch:
      return "nvswitch";
    case PathKind::kNvLink:
      return "nvlink";
    case PathKind::kPcieSwitch:
      return "pcie-switch";
    case PathKind::kPcieCpu:
      return "pcie-cpu";
    case PathKind::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace

std::string NodeGpu::label() const { return "GPU " + bus_id + " " + name; }

NodeGpu node_gpu(const DiagRun& run, const Snapshot& s, const std::string& bus_id) {
  NodeGpu n;
  n.bus_id = bus_id;
  const NvmlGpu* g = find_nvml_gpu(s, bus_id);
  if (const PciDevice* d = pci_device(s, bus_id); d != nullptr && d->device_id != 0) {
    n.device_id = d->device_id;
  } else if (g != nullptr && g->pci_device_id.ok()) {
    n.device_id = static_cast<uint16_t>(g->pci_device_id.value >> 16);
  }
  if (n.device_id != 0) {
    n.perf = find_gpu_perf(n.device_id);
    n.model = find_gpu_model(n.device_id);
  }
  for (const auto& d : run.devices) {
    if (d.bus_id == bus_id && !d.name.empty()) n.name = d.name;
  }
  if (n.name.empty() && g != nullptr && g->name.ok()) n.name = g->name.value;
  if (n.name.empty() && n.perf != nullptr) n.name = n.perf->name;
  if (n.name.empty() && n.model != nullptr) n.name = n.model->name;
  if (n.name.empty()) n.name = "GPU";
  return n;
}

PcieRate pcie_rate(const Snapshot& s, const std::string& bus_id) {
  PcieRate r;
  const PciDevice* d = pci_device(s, bus_id);
  const NvmlGpu* g = find_nvml_gpu(s, bus_id);
  const NvmlHealth* h = g != nullptr ? &g->health : nullptr;
  const PciBridge* port = d != nullptr ? find_pci_bridge(s, d->parent) : nullptr;
  int width = d != nullptr ? d->current_link_width : 0;
  if (width <= 0 && h != nullptr && h->pcie_link_width.ok()) {
    width = static_cast<int>(h->pcie_link_width.value);
  }
  double current = d != nullptr ? d->current_link_speed_gts : 0;
  if (current <= 0 && h != nullptr && h->pcie_link_gen.ok())
    current = pcie_gen_gts(h->pcie_link_gen.value);
  double reach = known_min(
      {d != nullptr ? d->max_link_speed_gts : 0.0, port != nullptr ? port->max_link_speed_gts : 0.0,
       h != nullptr && h->pcie_link_gen_max.ok() ? pcie_gen_gts(h->pcie_link_gen_max.value) : 0.0});
  double speed = reach > 0 ? reach : current;
  r.bytes_per_s = pcie_link_bytes_per_s(speed, width);
  if (r.bytes_per_s <= 0) return r;
  r.text = fmt::format("x{} at {:.1f} GT/s", width, speed);
  if (current > 0 && std::fabs(current - speed) > 0.05) {
    r.text +=
        fmt::format(" (the snapshot saw {:.1f} GT/s: idle GPUs lower their link speed)", current);
  }
  return r;
}

GpuPath gpu_path(const DiagRun& run, const Snapshot& s, const std::string& src,
                 const std::string& dst) {
  GpuPath p;
  NodeGpu a = node_gpu(run, s, src), b = node_gpu(run, s, dst);
  // The slower GPU's NVLink rate bounds the pair; 0 when either is unknown.
  double nvlink_gbs = 0;
  if (a.perf != nullptr && b.perf != nullptr) {
    nvlink_gbs = std::min(a.perf->nvlink_gbs, b.perf->nvlink_gbs);
  }
  NvLinkCount c = count_links(s, src, dst);
  if ((c.known && c.to_switch > 0) || (!c.known && has_nvswitch(s))) {
    p.kind = PathKind::kNvSwitch;
    p.bytes_per_s = nvlink_gbs * 1e9;
    p.text = "NVLink via NVSwitch";
  } else if (c.known && c.to_peer > 0) {
    p.kind = PathKind::kNvLink;
    p.links = c.to_peer;
    // Each of the GPU's links carries an equal share of its NVLink rate.
    p.bytes_per_s = nvlink_gbs * 1e9 * c.to_peer / c.total;
    p.text = fmt::format("{} direct NVLink{} of {}", c.to_peer, c.to_peer == 1 ? "" : "s", c.total);
  } else {
    int level = topo_level(s, src, dst);
    const PciDevice* da = pci_device(s, src);
    const PciDevice* db = pci_device(s, dst);
    bool share_bridge = false, chains_known = false;
    if (da != nullptr && db != nullptr && !da->root_bus.empty() && !db->root_bus.empty()) {
      chains_known = true;
      std::vector<std::string> ca = chain_of(s, *da), cb = chain_of(s, *db);
      share_bridge = da->root_bus == db->root_bus && !ca.empty() && !cb.empty() && ca[0] == cb[0];
    }
    if ((level >= 0 && level <= 20) || (level < 0 && share_bridge)) {
      // Below one PCIe switch the copy stays in the switch: the slower
      // link's rate is the path's.
      p.kind = PathKind::kPcieSwitch;
      PcieRate ra = pcie_rate(s, src), rb = pcie_rate(s, dst);
      p.bytes_per_s = known_min({ra.bytes_per_s, rb.bytes_per_s});
      if (ra.bytes_per_s <= 0 || rb.bytes_per_s <= 0) p.bytes_per_s = 0;
      p.text = "PCIe through a switch";
    } else if (level > 20 || chains_known) {
      // Through the root complex or across sockets: what the CPU makes of
      // peer traffic varies too much for an expected rate.
      p.kind = PathKind::kPcieCpu;
      p.text = "PCIe through the CPU";
    } else {
      p.text = "path unknown";
    }
  }
  if (p.bytes_per_s > 0) p.text += fmt::format(", {:.1f} GB/s per direction", p.bytes_per_s / 1e9);
  p.group = fmt::format("{}/{}/{}/{}", kind_name(p.kind), p.links, a.name, b.name);
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string judge(double value, double expected, double peer_median, double outlier_fraction) {
  bool below = expected > 0 && value < expected;
  bool outlier = peer_median > 0 && value < outlier_fraction * peer_median;
  if (below && outlier) return "below-expected,outlier";
  if (below) return "below-expected";
  if (outlier) return "outlier";
  return "ok";
}

bool is_outlier(const std::string& j) { return j.find("outlier") != std::string::npos; }

Finding diag_finding(const char* id, Severity sev, std::string summary) {
  Finding f = make_finding(id, sev, std::move(summary));
  f.check = "diag";
  return f;
}

void add_finding_gpu(Finding* f, const std::string& bus_id) {
  if (!bus_id.empty() && std::find(f->gpus.begin(), f->gpus.end(), bus_id) == f->gpus.end()) {
    f->gpus.push_back(bus_id);
  }
}

}  // namespace gd
