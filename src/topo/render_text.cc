// The text form of `gpudoctor topo`: the GPU table, the order line, the path
// matrix with CPU and NUMA affinity as nvidia-smi topo -m prints them, its
// legend, and the notes.
#include <fmt/format.h>

#include <algorithm>

#include "topo/render.h"

namespace gd {
namespace {

using Row = std::vector<std::string>;

// Columns separated by two blanks, each as wide as its widest cell; no
// trailing blanks.
std::string table(const std::vector<Row>& rows) {
  std::vector<size_t> width;
  for (const Row& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string or_unknown(const std::string& v) { return v.empty() ? "?" : v; }

std::string gen_width(int gen, int width) {
  return fmt::format("Gen{} x{}", gen > 0 ? std::to_string(gen) : "?",
                     width > 0 ? std::to_string(width) : "?");
}

std::string link_text(const PcieLink& l) {
  if (l.source.empty()) return "?";
  return gen_width(l.gen, l.width) + " / " + gen_width(l.gen_max, l.width_max);
}

// The node; "no NUMA node (VM)" where the machine says so; "N/A" when the
// kernel reports none (-1) or it is unknown.
std::string numa_text(const TopoGpu& g) {
  if (g.numa_node) return std::to_string(*g.numa_node);
  return g.numa_note.empty() ? "N/A" : g.numa_note;
}

// nvidia-smi topo -m's legend (nvidia-smi 550, transcribed 2026-12); a line
// for ? follows when the matrix has one.
constexpr const char* kLegend =
    "Legend:\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
    "within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
    "Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

}  // namespace

std::string render_topology_text(const Topology& t) {
  if (t.gpus.empty()) return t.no_gpu + "\n";
  std::string out =
      fmt::format("{} GPU{} (from {})\n\n", t.gpus.size(), t.gpus.size() == 1 ? "" : "s", t.source);
  std::vector<Row> rows = {
      {"CUDA", "CUDA/PCI", "SMI", "BUS ID", "UUID", "MODEL", "NUMA", "CPUS", "LINK (now / max)"}};
  for (const TopoGpu& g : t.gpus) {
    rows.push_back({g.cuda_default ? std::to_string(*g.cuda_default) : "?",
                    std::to_string(g.cuda_pci), std::to_string(g.smi_index), g.bdf,
                    or_unknown(g.uuid), or_unknown(g.model), numa_text(g), or_unknown(g.cpus),
                    link_text(g.link)});
  }
  out += table(rows);
  out +=
      "CUDA: CUDA index in the default order; CUDA/PCI: with CUDA_DEVICE_ORDER=PCI_BUS_ID; "
      "SMI: nvidia-smi index\n";
  if (!t.order_line.empty()) out += t.order_line + "\n";

  out += "\n";
  Row head = {""};
  for (const TopoGpu& g : t.gpus) head.push_back(fmt::format("GPU{}", g.smi_index));
  head.push_back("CPU Affinity");
  head.push_back("NUMA Affinity");
  std::vector<Row> matrix = {head};
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    Row r = {fmt::format("GPU{}", t.gpus[i].smi_index)};
    for (size_t j = 0; j < t.gpus.size(); ++j) r.push_back(path_name(t.paths[i][j]));
    r.push_back(t.gpus[i].cpus.empty() ? "N/A" : t.gpus[i].cpus);
    r.push_back(numa_text(t.gpus[i]));
    matrix.push_back(std::move(r));
  }
  out += table(matrix);
  out += "\n";
  out += kLegend;
  bool any_unknown = false;
  for (const auto& row : t.paths) {
    for (const Path& p : row) any_unknown = any_unknown || p.kind == PathKind::kUnknown;
  }
  if (any_unknown) out += "  ?    = Not known from sysfs or NVML (see the notes)\n";
  if (!t.notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : t.notes) out += "  - " + n + "\n";
  }
  return out;
}

}  // namespace gd
