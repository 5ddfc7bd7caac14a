#include "fleet/diff.h"

#include <algorithm>
#include <map>
#include <set>

#include "checks/runner.h"
#include "checks/util.h"
#include "facts/identity.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {
namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string stem(const std::string& path) {
  std::string b = base_name(path);
  if (b.size() > 5 && b.ends_with(".json")) b.resize(b.size() - 5);
  return b;
}

// Replaces names[i] by rename(i) for every name held by more than one node.
template <class F>
void disambiguate(std::vector<std::string>* names, F rename) {
  std::map<std::string, int> count;
  for (const auto& n : *names) ++count[n];
  for (size_t i = 0; i < names->size(); ++i) {
    if (count[(*names)[i]] > 1) (*names)[i] = rename(i);
  }
}

// --- GPUs ------------------------------------------------------------------

struct GpuView {
  std::string bus_id;
  const PciDevice* pci = nullptr;
  const NvmlGpu* nvml = nullptr;
};

// The node's GPUs in bus order: those on the PCI bus with NVML's view of
// each, then any NVML knows of that the PCI probe did not record.
std::vector<GpuView> gpus_of(const Snapshot& s) {
  std::vector<GpuView> out;
  std::set<std::string> seen;
  for (const PciDevice* d : pci_gpus(s)) {
    GpuView v{d->bdf, d, nullptr};
    for (const auto& g : s.nvml.gpus) {
      if (g.pci_bus_id.ok() && g.pci_bus_id.value == d->bdf) v.nvml = &g;
    }
    seen.insert(d->bdf);
    out.push_back(v);
  }
  for (const auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.ok() && seen.insert(g.pci_bus_id.value).second) {
      out.push_back(GpuView{g.pci_bus_id.value, nullptr, &g});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const GpuView& a, const GpuView& b) { return a.bus_id < b.bus_id; });
  return out;
}

// An NVML value as text: NOT_SUPPORTED (3) is a property of the GPU and
// compares as such; any other failure is "unknown".
template <class T, class F>
std::string nvml_text(const NvmlValue<T>& v, F text) {
  if (v.ok()) return text(v.value);
  return v.rc == 3 ? "not supported" : "unknown";
}

std::string on_off(int v) { return v == 1 ? "on" : "off"; }

// PCIe generation from the link speed in GT/s (2.5 Gen1 ... 64 Gen6).
int pcie_gen(double gts) {
  const double speeds[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i) {
    if (gts > speeds[i] - 0.1 && gts < speeds[i] + 0.1) return i + 1;
  }
  return 0;
}

std::string max_link_text(const GpuView& g) {
  int gen = 0, width = 0;
  if (g.pci != nullptr) {
    gen = pcie_gen(g.pci->max_link_speed_gts);
    width = g.pci->max_link_width;
  }
  if (g.nvml != nullptr) {
    const auto& h = g.nvml->health;
    if (gen == 0 && h.pcie_link_gen_max.ok()) gen = static_cast<int>(h.pcie_link_gen_max.value);
    if (width == 0 && h.pcie_link_width_max.ok()) {
      width = static_cast<int>(h.pcie_link_width_max.value);
    }
  }
  if (gen == 0 && width == 0) return "unknown";
  return (gen > 0 ? "Gen" + std::to_string(gen) : "Gen?") + " " +
         (width > 0 ? "x" + std::to_string(width) : "x?");
}

// The current width only: the speed drops with the power state when idle,
// the width does not (pcie.link-degraded).
std::string width_text(const GpuView& g) {
  if (g.pci != nullptr && g.pci->current_link_width > 0) {
    return "x" + std::to_string(g.pci->current_link_width);
  }
  if (g.nvml != nullptr && g.nvml->health.pcie_link_width.ok()) {
    return "x" + std::to_string(g.nvml->health.pcie_link_width.value);
  }
  return "unknown";
}

std::string compute_mode_text(int m) {
  switch (m) {
    case 0:
      return "default";
    case 1:
      return "exclusive-thread";
    case 2:
      return "prohibited";
    case 3:
      return "exclusive-process";
    default:
      return std::to_string(m);
  }
}

// (field, value) pairs of one GPU, in a fixed order.
std::vector<std::pair<std::string, std::string>> gpu_fields(const GpuView& g) {
  const NvmlGpu* n = g.nvml;
  auto nv = [&](auto member, auto text) -> std::string {
    return n == nullptr ? "unknown" : nvml_text(n->*member, text);
  };
  auto str = [](const std::string& v) { return v; };
  std::string model = nv(&NvmlGpu::name, str);
  if (model == "unknown" && g.pci != nullptr && !g.pci->proc_model.empty()) {
    model = g.pci->proc_model;
  }
  std::string ecc = "unknown";
  std::string power = "unknown";
  if (n != nullptr) {
    const auto& h = n->health;
    ecc = nvml_text(h.ecc_mode_current, on_off);
    if (h.ecc_mode_current.ok() && h.ecc_mode_pending.ok() &&
        h.ecc_mode_pending.value != h.ecc_mode_current.value) {
      ecc += " (" + on_off(h.ecc_mode_pending.value) + " pending)";
    }
    power =
        nvml_text(h.power_limit_mw, [](uint32_t mw) { return std::to_string(mw / 1000) + " W"; });
  }
  return {{"model", model},
          {"vbios", nv(&NvmlGpu::vbios_version, str)},
          {"memory", nv(&NvmlGpu::memory_total_bytes, format_bytes)},
          {"pcie_max_link", max_link_text(g)},
          {"pcie_width", width_text(g)},
          {"ecc_mode", ecc},
          {"mig_mode", nv(&NvmlGpu::mig_mode_current, on_off)},
          {"compute_mode", nv(&NvmlGpu::compute_mode, compute_mode_text)},
          {"power_limit", power}};
}

void add_field(std::vector<FieldDiff>* out, std::string field, std::string scope, std::string gpu,
               const std::vector<std::string>& nodes, const std::vector<std::string>& values) {
  FieldDiff f = compare_field(std::move(field), nodes, values);
  f.scope = std::move(scope);
  f.gpu = std::move(gpu);
  out->push_back(std::move(f));
}

void compare_gpus(const std::vector<DiffNode>& nodes, std::vector<FieldDiff>* out) {
  std::vector<std::vector<GpuView>> per_node;
  for (const auto& n : nodes) per_node.push_back(gpus_of(*n.snapshot));
  auto bus_ids = [](const std::vector<GpuView>& gpus) {
    std::vector<std::string> ids;
    for (const auto& g : gpus) ids.push_back(g.bus_id);
    return ids;
  };
  bool same_bus_ids = true, same_count = true;
  for (const auto& gpus : per_node) {
    same_bus_ids = same_bus_ids && bus_ids(gpus) == bus_ids(per_node[0]);
    same_count = same_count && gpus.size() == per_node[0].size();
  }
  if (!same_bus_ids && same_count) {
    // Boards of another layout put the same GPUs at other bus ids: match
    // them by bus order, and say where each sits.
    for (size_t i = 0; i < per_node[0].size(); ++i) {
      std::vector<std::string> names;
      std::vector<std::vector<std::pair<std::string, std::string>>> values;
      for (size_t k = 0; k < nodes.size(); ++k) {
        names.push_back(nodes[k].name);
        auto f = gpu_fields(per_node[k][i]);
        f.insert(f.begin(), {"bus_id", per_node[k][i].bus_id});
        values.push_back(std::move(f));
      }
      for (size_t j = 0; j < values[0].size(); ++j) {
        std::vector<std::string> column;
        for (const auto& v : values) column.push_back(v[j].second);
        add_field(out, values[0][j].first, "gpu", "#" + std::to_string(i), names, column);
      }
    }
    return;
  }
  // By bus id. A GPU some nodes lack is one "present" field; its other
  // fields are compared among the nodes that have it.
  std::set<std::string> all_ids;
  for (const auto& gpus : per_node) {
    for (const auto& g : gpus) all_ids.insert(g.bus_id);
  }
  for (const auto& id : all_ids) {
    std::vector<std::string> all_names, presence, names;
    std::vector<std::vector<std::pair<std::string, std::string>>> values;
    for (size_t k = 0; k < nodes.size(); ++k) {
      all_names.push_back(nodes[k].name);
      auto it = std::find_if(per_node[k].begin(), per_node[k].end(),
                             [&](const GpuView& g) { return g.bus_id == id; });
      presence.push_back(it == per_node[k].end() ? "absent" : "present");
      if (it == per_node[k].end()) continue;
      names.push_back(nodes[k].name);
      values.push_back(gpu_fields(*it));
    }
    if (names.size() != nodes.size()) add_field(out, "present", "gpu", id, all_names, presence);
    for (size_t j = 0; j < values[0].size(); ++j) {
      std::vector<std::string> column;
      for (const auto& v : values) column.push_back(v[j].second);
      add_field(out, values[0][j].first, "gpu", id, names, column);
    }
  }
}

// --- node and report fields --------------------------------------------------

void compare_node_fields(const std::vector<DiffNode>& nodes, std::vector<FieldDiff>* out) {
  std::vector<std::string> names;
  std::vector<NodeIdentity> ids;
  std::vector<std::map<std::string, std::string>> values;
  std::vector<std::string> order;  // field names in first-seen order
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    names.push_back(n.name);
    ids.push_back(node_identity(*n.snapshot));
    std::map<std::string, std::string> v;
    for (auto& [field, value] : drift_fields(ids.back())) {
      if (seen.insert(field).second) order.push_back(field);
      v[field] = std::move(value);
    }
    values.push_back(std::move(v));
  }
  // Module parameters go last, in name order, whichever node listed them.
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& f) { return !f.starts_with("nvidia."); });
  std::sort(std::find_if(order.begin(), order.end(),
                         [](const std::string& f) { return f.starts_with("nvidia."); }),
            order.end());
  for (const auto& field : order) {
    std::vector<std::string> column;
    for (size_t k = 0; k < nodes.size(); ++k) {
      auto it = values[k].find(field);
      if (it != values[k].end()) {
        column.push_back(it->second);
      } else {
        // Only module parameters are ever missing: a module without that
        // parameter (another driver branch), or no module seen at all.
        column.push_back(ids[k].module_params_known ? "absent" : "unknown");
      }
    }
    add_field(out, field, "node", "", names, column);
  }
}

std::string finding_text(Severity sev, const std::set<std::string>& gpus) {
  std::string out = severity_name(sev);
  if (gpus.empty()) return out;
  // Beyond a few GPUs the count says enough and keeps the line short.
  if (gpus.size() > 4) return out + " on " + std::to_string(gpus.size()) + " GPUs";
  return out + " on " + join_skip_leading_empty(gpus, ", ");
}

void compare_reports(const std::vector<DiffNode>& nodes, std::vector<FieldDiff>* out) {
  std::vector<std::string> names, verdicts;
  for (const auto& n : nodes) {
    names.push_back(n.name);
    verdicts.push_back(severity_name(n.report.verdict));
  }
  add_field(out, "verdict", "report", "", names, verdicts);
  out->back().healthy = "ok";
  // Per finding id and node: the worst severity raised and the GPUs concerned.
  struct Raised {
    Severity worst = Severity::kNotApplicable;
    std::set<std::string> gpus;
  };
  std::map<std::string, std::vector<Raised>> raised;
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (const auto& f : nodes[k].report.findings) {
      if (severity_weight(f.severity) < severity_weight(Severity::kInfo)) continue;
      auto& per_node = raised[f.id];
      per_node.resize(nodes.size());
      per_node[k].worst = worse(per_node[k].worst, f.severity);
      per_node[k].gpus.insert(f.gpus.begin(), f.gpus.end());
    }
  }
  // Worst first, so a failing id leads.
  std::vector<std::pair<int, std::string>> ids;
  for (const auto& [id, per_node] : raised) {
    int w = 0;
    for (const auto& r : per_node) w = std::max(w, severity_weight(r.worst));
    ids.emplace_back(-w, id);
  }
  std::sort(ids.begin(), ids.end());
  for (const auto& [w, id] : ids) {
    std::vector<std::string> column;
    for (const auto& r : raised[id]) {
      column.push_back(r.worst == Severity::kNotApplicable ? "not raised"
                                                           : finding_text(r.worst, r.gpus));
    }
    add_field(out, id, "report", "", names, column);
    out->back().healthy = "not raised";
  }
}

}  // namespace

std::vector<std::string> node_names(const std::vector<std::string>& hostnames,
                                    const std::vector<std::string>& files) {
  std::vector<std::string> names;
  for (size_t i = 0; i < files.size(); ++i) {
    names.push_back(i < hostnames.size() && !hostnames[i].empty() ? hostnames[i] : stem(files[i]));
  }
  std::vector<std::string> base = names;
  disambiguate(&names, [&](size_t i) { return base[i] + " (" + base_name(files[i]) + ")"; });
  disambiguate(&names, [&](size_t i) { return base[i] + " (" + files[i] + ")"; });
  std::map<std::string, int> seen;
  std::vector<std::string> first = names;
  disambiguate(&names, [&](size_t i) {
    int n = ++seen[first[i]];
    return n == 1 ? first[i] : first[i] + " #" + std::to_string(n);
  });
  return names;
}

std::string FieldDiff::label() const {
  if (scope == "gpu") return "gpu " + gpu + " " + field;
  if (scope == "report" && field != "verdict") return "finding " + field;
  return field;
}

namespace {

// "fail", "warn on 0000:18:00.0": a value of a report field that is a problem.
bool problem_value(const std::string& v) { return v.starts_with("fail") || v.starts_with("warn"); }

}  // namespace

bool FieldDiff::problems() const {
  return !healthy.empty() && !same() &&
         std::any_of(groups.begin(), groups.end(),
                     [](const ValueGroup& g) { return problem_value(g.value); });
}

std::vector<std::string> FieldDiff::odd_nodes() const {
  std::vector<std::string> out;
  if (problems()) {
    for (const auto& g : groups) {
      if (problem_value(g.value)) out.insert(out.end(), g.nodes.begin(), g.nodes.end());
    }
    return out;
  }
  if (majority < 0) return out;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (static_cast<int>(i) == majority) continue;
    out.insert(out.end(), groups[i].nodes.begin(), groups[i].nodes.end());
  }
  return out;
}

FieldDiff compare_field(std::string field, const std::vector<std::string>& nodes,
                        const std::vector<std::string>& values) {
  FieldDiff f;
  f.field = std::move(field);
  std::map<std::string, std::vector<std::string>> by_value;
  for (size_t i = 0; i < nodes.size() && i < values.size(); ++i) {
    by_value[values[i]].push_back(nodes[i]);
  }
  for (auto& [value, members] : by_value) f.groups.push_back({value, std::move(members)});
  // Most nodes first; the map already ordered equal sizes by value.
  std::stable_sort(f.groups.begin(), f.groups.end(), [](const ValueGroup& a, const ValueGroup& b) {
    return a.nodes.size() > b.nodes.size();
  });
  size_t total = std::min(nodes.size(), values.size());
  if (!f.groups.empty() && f.groups[0].nodes.size() * 2 > total) f.majority = 0;
  return f;
}

bool DiffResult::drift() const {
  return std::any_of(fields.begin(), fields.end(), [](const FieldDiff& f) { return !f.same(); });
}

DiffResult diff_snapshots(const std::vector<const Snapshot*>& snapshots,
                          const std::vector<std::string>& files, const Config& config,
                          const std::vector<const CheckEntry*>& checks,
                          const std::vector<const Report*>& reports) {
  DiffResult d;
  std::vector<std::string> hostnames;
  for (const Snapshot* s : snapshots) hostnames.push_back(s->hostname);
  std::vector<std::string> names = node_names(hostnames, files);
  for (size_t i = 0; i < snapshots.size(); ++i) {
    DiffNode n;
    n.name = names[i];
    n.file = i < files.size() ? files[i] : "";
    n.snapshot = snapshots[i];
    n.report = i < reports.size() && reports[i] != nullptr
                   ? *reports[i]
                   : run_checks(*snapshots[i], config, checks);
    d.nodes.push_back(std::move(n));
  }
  if (d.nodes.empty()) return d;
  compare_node_fields(d.nodes, &d.fields);
  compare_gpus(d.nodes, &d.fields);
  compare_reports(d.nodes, &d.fields);
  return d;
}

}  // namespace gd
