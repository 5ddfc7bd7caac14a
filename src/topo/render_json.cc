// gpudoctor.topo/v2: the Topology as JSON (docs/topo.md). Unknown values are
// null, never a made-up number.
#include <nlohmann/json.hpp>

#include "topo/render.h"

namespace gd {
namespace {

// Keys in the order docs/topo.md lists them, "schema" first.
using json = nlohmann::ordered_json;

json int_or_null(int v) { return v > 0 ? json(v) : json(nullptr); }

json str_or_null(const std::string& v) { return v.empty() ? json(nullptr) : json(v); }

json gpu_json(const TopoGpu& g) {
  return {
      {"nvml_index", g.smi_index},
      {"cuda_index", g.cuda_default ? json(*g.cuda_default) : json(nullptr)},
      {"cuda_index_pci_bus_id", g.cuda_pci},
      {"bus_id", g.bdf},
      {"uuid", str_or_null(g.uuid)},
      {"name", str_or_null(g.model)},
      {"numa_node", g.numa_node ? json(*g.numa_node) : json(nullptr)},
      {"numa_note", str_or_null(g.numa_note)},
      {"cpus", str_or_null(g.cpus)},
      {"link",
       {{"gen", int_or_null(g.link.gen)},
        {"gen_max", int_or_null(g.link.gen_max)},
        {"width", int_or_null(g.link.width)},
        {"width_max", int_or_null(g.link.width_max)},
        {"source", str_or_null(g.link.source)}}},
  };
}

json matrix_json(const std::vector<std::vector<Path>>& m) {
  json out = json::array();
  for (const auto& row : m) {
    json r = json::array();
    for (const Path& p : row) r.push_back(path_name(p));
    out.push_back(std::move(r));
  }
  return out;
}

json visible_json(const VisibleOne& v) {
  if (v.bdf.empty()) return nullptr;
  return {{"bus_id", v.bdf}, {"nvml_index", v.smi_index}};
}

}  // namespace

std::string render_topology_json(const Topology& t) {
  json gpus = json::array();
  for (const TopoGpu& g : t.gpus) gpus.push_back(gpu_json(g));
  json notes = json::array();
  if (!t.no_gpu.empty()) notes.push_back(t.no_gpu);
  if (!t.order_line.empty()) notes.push_back(t.order_line);
  for (const auto& n : t.notes) notes.push_back(n);
  json doc = {
      {"schema", kTopoSchema},
      {"source", str_or_null(t.source)},
      {"gpus", std::move(gpus)},
      {"paths", matrix_json(t.paths)},
      {"pcie_paths", matrix_json(t.pcie_paths)},
      {"cuda_order",
       {{"default_known", t.default_order_known},
        {"default_observed", t.default_order_observed},
        {"differs_from_pci", t.order_differs},
        {"visible_devices_1",
         {{"default", visible_json(t.cvd1_default)}, {"pci_bus_id", visible_json(t.cvd1_pci)}}}}},
      {"notes", std::move(notes)},
  };
  return doc.dump(2) + "\n";
}

}  // namespace gd
