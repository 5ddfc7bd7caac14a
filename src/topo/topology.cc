// build_topology: the GPU rows (CUDA's two orders, nvidia-smi index, NUMA,
// CPUs, link) and the path matrix, with a note for every value that is not
// known and for every pair where sysfs and NVML disagree.
#include "topo/topology.h"

#include <fmt/format.h>

#include <set>

#include "facts/cuda_visible.h"
#include "util/text.h"

namespace gd {
namespace {

const PciDevice* find_device(const Snapshot& s, const std::string& bdf) {
  for (const auto& d : s.pci) {
    if (normalize_bdf(d.bdf) == bdf) return &d;
  }
  return nullptr;
}

bool nvml_answered(const Snapshot& s) {
  return s.nvml.attempted && s.nvml.child_error.empty() && s.nvml.init_rc == 0;
}

const NvmlGpu* find_nvml(const Snapshot& s, const std::string& bdf) {
  if (!nvml_answered(s)) return nullptr;
  for (const auto& g : s.nvml.gpus) {
    if (g.handle_rc == 0 && g.pci_bus_id.ok() && normalize_bdf(g.pci_bus_id.value) == bdf) {
      return &g;
    }
  }
  return nullptr;
}

// Each field from NVML where it answered, else from sysfs.
PcieLink pcie_link(const NvmlGpu* n, const PciDevice* d) {
  PcieLink l;
  bool from_nvml = false;
  bool from_sysfs = false;
  auto take = [&](int* out, const NvmlValue<uint32_t>* nv, int sysfs_value) {
    if (nv != nullptr && nv->ok() && nv->value > 0) {
      *out = static_cast<int>(nv->value);
      from_nvml = true;
    } else if (sysfs_value > 0) {
      *out = sysfs_value;
      from_sysfs = true;
    }
  };
  const NvmlHealth* h = n != nullptr ? &n->health : nullptr;
  take(&l.gen, h ? &h->pcie_link_gen : nullptr,
       d ? pcie_gen_from_gts(d->current_link_speed_gts) : 0);
  take(&l.gen_max, h ? &h->pcie_link_gen_max : nullptr,
       d ? pcie_gen_from_gts(d->max_link_speed_gts) : 0);
  take(&l.width, h ? &h->pcie_link_width : nullptr, d ? d->current_link_width : 0);
  take(&l.width_max, h ? &h->pcie_link_width_max : nullptr, d ? d->max_link_width : 0);
  l.source = from_nvml && from_sysfs ? "nvml+sysfs"
             : from_nvml             ? "nvml"
             : from_sysfs            ? "sysfs"
                                     : "";
  return l;
}

// Why NVML gave no path for a pair, in a few words.
std::string nvml_silence(const Snapshot& s, const NvmlGpu* a, const NvmlGpu* b,
                         const NvmlTopoPair* pair) {
  if (!s.nvml.attempted) return "NVML was not asked";
  if (!nvml_answered(s)) return "NVML did not answer";
  if (a == nullptr || b == nullptr) return "NVML does not list both GPUs";
  if (pair == nullptr || pair->level.rc == -1) return "NVML gave no topology";
  if (pair->level.rc != 0) {
    return fmt::format("nvmlDeviceGetTopologyCommonAncestor returned {}", pair->level.rc);
  }
  return fmt::format("NVML answered an unknown level {}", pair->level.value);
}

const NvmlTopoPair* find_pair(const Snapshot& s, const NvmlGpu* a, const NvmlGpu* b) {
  if (a == nullptr || b == nullptr) return nullptr;
  for (const auto& p : s.nvml.topology) {
    if ((p.a == a->index && p.b == b->index) || (p.a == b->index && p.b == a->index)) return &p;
  }
  return nullptr;
}

// Why a predicted order was not verified, as the end of the note above.
std::string unverified_why(const Snapshot& s) {
  if (!environment_shows_default_order(s)) return "";  // the environment note says why
  if (!s.cuda.attempted) return " (--verify runs CUDA to observe it)";
  for (const auto& p : s.probes) {
    if (p.name == "cuda" && p.status != ProbeStatus::kOk) {
      return "; CUDA did not verify it (" + p.detail + ")";
    }
  }
  return "; CUDA's run did not show every GPU";
}

void fill_orders(const Snapshot& s, const GpuInventory& inv, Topology* t) {
  std::vector<size_t> pci = cuda_order(inv.gpus, DeviceOrder::kPciBusId);
  for (size_t ordinal = 0; ordinal < pci.size(); ++ordinal) {
    t->gpus[pci[ordinal]].cuda_pci = static_cast<int>(ordinal);
  }
  if (pci.size() > 1) t->cvd1_pci = {inv.gpus[pci[1]].bdf, inv.gpus[pci[1]].smi_index};
  DefaultOrder d = default_cuda_order(s, inv);
  if (!d.known) {
    t->notes.push_back("CUDA's default order is not known: " + d.why_unknown);
    return;
  }
  t->default_order_known = true;
  t->default_order_observed = d.observed;
  for (size_t ordinal = 0; ordinal < d.order.size(); ++ordinal) {
    t->gpus[d.order[ordinal]].cuda_default = static_cast<int>(ordinal);
  }
  if (!d.observed && inv.gpus.size() > 1) {
    t->notes.push_back(
        "CUDA's default order is predicted (FASTEST_FIRST: higher compute capability, then "
        "higher max SM clock, then lower bus id), not observed in a CUDA run" +
        unverified_why(s));
  }
  t->order_differs = d.order != pci;
  if (inv.gpus.size() < 2) return;
  const GpuIdentity& by_default = inv.gpus[d.order[1]];
  const GpuIdentity& by_pci = inv.gpus[pci[1]];
  t->cvd1_default = {by_default.bdf, by_default.smi_index};
  if (!t->order_differs) return;
  t->order_line = fmt::format(
      "CUDA's default order differs from PCI order: CUDA_VISIBLE_DEVICES=1 is {} (nvidia-smi {}) "
      "by default, {} (nvidia-smi {}) with CUDA_DEVICE_ORDER=PCI_BUS_ID{}",
      by_default.bdf, by_default.smi_index, by_pci.bdf, by_pci.smi_index,
      d.order[1] == pci[1] ? " (the same GPU, but other indices differ)" : "");
}

void environment_notes(const Snapshot& s, Topology* t) {
  const auto& env = s.env.vars;
  if (auto it = env.find("CUDA_DEVICE_ORDER"); it != env.end()) {
    DeviceOrderSetting o = parse_device_order(&it->second);
    t->notes.push_back(fmt::format(
        "this environment sets CUDA_DEVICE_ORDER={}: its programs number GPUs as in the {} column",
        it->second, o.order == DeviceOrder::kPciBusId ? "CUDA/PCI" : "CUDA"));
  }
  if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end()) {
    t->notes.push_back(fmt::format(
        "this environment sets CUDA_VISIBLE_DEVICES={}: its programs see only those GPUs, "
        "numbered from 0; the CUDA columns number every GPU",
        it->second));
  }
}

void fill_paths(const Snapshot& s, Topology* t) {
  size_t n = t->gpus.size();
  t->paths.assign(n, std::vector<Path>(n));
  t->pcie_paths.assign(n, std::vector<Path>(n));
  std::set<std::string> unknown_why;
  size_t unknown_pairs = 0;
  for (size_t i = 0; i < n; ++i) {
    t->paths[i][i] = t->pcie_paths[i][i] = {PathKind::kSelf, 0};
    for (size_t j = i + 1; j < n; ++j) {
      const TopoGpu& a = t->gpus[i];
      const TopoGpu& b = t->gpus[j];
      std::string why;
      PathKind sysfs = sysfs_pcie_path(s, a.bdf, b.bdf, &why);
      const NvmlGpu* na = find_nvml(s, a.bdf);
      const NvmlGpu* nb = find_nvml(s, b.bdf);
      const NvmlTopoPair* pair = find_pair(s, na, nb);
      PathKind nvml = pair != nullptr && pair->level.ok() ? nvml_level_path(pair->level.value)
                                                          : PathKind::kUnknown;
      PathKind pcie = nvml != PathKind::kUnknown ? nvml : sysfs;
      if (nvml != PathKind::kUnknown && sysfs != PathKind::kUnknown && nvml != sysfs) {
        t->notes.push_back(fmt::format(
            "GPU{}-GPU{} ({} - {}): the PCI tree in sysfs says {}, NVML says {}; NVML's is shown",
            a.smi_index, b.smi_index, a.bdf, b.bdf, path_name({sysfs, 0}), path_name({nvml, 0})));
      }
      if (pcie == PathKind::kUnknown) {
        ++unknown_pairs;
        unknown_why.insert(why);
        unknown_why.insert(nvml_silence(s, na, nb, pair));
      }
      Path shown{pcie, 0};
      if (na != nullptr && nb != nullptr) {
        std::optional<int> links = nvlink_count(s, *na, *nb);
        if (links && *links > 0) shown = {PathKind::kNvLink, *links};
      }
      t->pcie_paths[i][j] = t->pcie_paths[j][i] = {pcie, 0};
      t->paths[i][j] = t->paths[j][i] = shown;
    }
  }
  if (unknown_pairs > 0) {
    t->notes.push_back(fmt::format("? = not known ({} pair{}): {}", unknown_pairs,
                                   unknown_pairs == 1 ? "" : "s",
                                   join_skip_leading_empty(unknown_why, "; ")));
  }
}

}  // namespace

Topology build_topology(const Snapshot& s) {
  Topology t;
  GpuInventory inv = gpu_inventory(s);
  if (inv.gpus.empty()) {
    size_t on_bus = 0;
    for (const auto& d : s.pci) on_bus += d.kind == PciKind::kGpu ? 1 : 0;
    t.no_gpu = on_bus == 0 ? "no NVIDIA GPU found (NVML, CUDA and the PCI bus show none)"
                           : fmt::format(
                                 "no usable NVIDIA GPU: {} on the PCI bus, none driven by the "
                                 "nvidia driver (gpudoctor check says why)",
                                 on_bus);
    return t;
  }
  t.source = gpu_source_name(inv.source);
  for (const auto& g : inv.gpus) {
    TopoGpu row;
    row.smi_index = g.smi_index;
    row.bdf = g.bdf;
    row.uuid = g.uuid;
    row.model = g.name;
    const PciDevice* d = find_device(s, g.bdf);
    if (d != nullptr) {
      if (d->numa_node >= 0) {
        row.numa_node = d->numa_node;
      } else if (d->parent.empty() && !d->root_bus.empty()) {
        // A discrete GPU on bare metal sits behind a root port; straight on
        // a root bus is a hypervisor's virtual bus (QEMU, Firecracker), whose
        // guest has no NUMA affinity to give: the H200 VM's numa_node is -1
        // where nvidia-smi topo -m prints 0 (shared/recorded/h200-vm-580.159.04).
        row.numa_note = "no NUMA node (VM)";
      }
      row.cpus = d->local_cpulist;
      if (row.model.empty()) row.model = d->proc_model;
      if (row.uuid.empty()) row.uuid = d->proc_uuid;
    }
    row.link = pcie_link(find_nvml(s, g.bdf), d);
    t.gpus.push_back(std::move(row));
  }
  fill_orders(s, inv, &t);
  environment_notes(s, &t);
  fill_paths(s, &t);
  return t;
}

}  // namespace gd
