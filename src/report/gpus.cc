#include "report/gpus.h"

#include <algorithm>

namespace gd {
namespace {

GpuRow* find_row(std::vector<GpuRow>* rows, const std::string& bus_id) {
  for (auto& r : *rows) {
    if (r.bus_id == bus_id) return &r;
  }
  return nullptr;
}

GpuRow* row_for(std::vector<GpuRow>* rows, const std::string& bus_id) {
  if (GpuRow* r = find_row(rows, bus_id)) return r;
  GpuRow row;
  row.bus_id = bus_id;
  rows->push_back(std::move(row));
  return &rows->back();
}

}  // namespace

std::vector<GpuRow> gpu_rows(const Snapshot& s) {
  std::vector<GpuRow> rows;
  for (const auto& d : s.pci) {
    if (d.kind != PciKind::kGpu) continue;
    GpuRow r;
    r.bus_id = d.bdf;
    r.name = d.proc_model;
    r.uuid = d.proc_uuid;
    r.driver = d.driver;
    rows.push_back(std::move(r));
  }
  for (const auto& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok()) continue;
    GpuRow* r = row_for(&rows, g.pci_bus_id.value);
    r->nvml_index = static_cast<int>(g.index);
    if (g.name.ok()) r->name = g.name.value;
    if (g.uuid.ok()) r->uuid = g.uuid.value;
    if (g.memory_total_bytes.ok()) r->memory_total_bytes = g.memory_total_bytes.value;
  }
  for (const auto& run : s.cuda.runs) {
    if (run.label != "user") continue;
    for (const auto& d : run.devices) {
      if (d.pci_bus_id.empty()) continue;
      GpuRow* r = row_for(&rows, d.pci_bus_id);
      r->cuda_index = d.ordinal;
      if (r->name.empty()) r->name = d.name;
      if (r->uuid.empty()) r->uuid = d.uuid;
      if (!r->memory_total_bytes && d.total_memory_bytes > 0) {
        r->memory_total_bytes = d.total_memory_bytes;
      }
    }
  }
  return rows;
}

}  // namespace gd
