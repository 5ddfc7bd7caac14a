#include "fleet/report_input.h"

#include <string>

namespace gd {
namespace {

using json = nlohmann::json;

// A string field, "" when absent; false when present but not a string.
bool text(const json& obj, const char* key, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

template <class T>
void known(NvmlValue<T>* v, T value) {
  v->value = std::move(value);
  v->rc = 0;
}

}  // namespace

Result<ReportInput> report_input_from_json(const json& j) {
  if (!j.is_object() || j.value("schema", json()) != kReportSchema) {
    return Error{std::string("not a ") + kReportSchema + " document"};
  }
  ReportInput in;
  std::string verdict;
  if (!text(j, "host", &in.snapshot.hostname) || !text(j, "taken_at", &in.snapshot.taken_at) ||
      !text(j, "verdict", &verdict)) {
    return Error{"report: host, taken_at and verdict must be strings"};
  }
  in.report.verdict = severity_from_name(verdict);
  const json gpus = j.value("gpus", json::array());
  const json findings = j.value("findings", json::array());
  if (!gpus.is_array() || !findings.is_array()) {
    return Error{"report: gpus and findings must be arrays"};
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    const json& g = gpus[i];
    NvmlGpu gpu;
    std::string bus, name, uuid;
    if (!g.is_object() || !text(g, "bus_id", &bus) || !text(g, "name", &name) ||
        !text(g, "uuid", &uuid)) {
      return Error{"report: gpus[" + std::to_string(i) + "] is not a GPU object"};
    }
    gpu.index = static_cast<uint32_t>(i);
    if (auto idx = g.find("nvml_index"); idx != g.end() && idx->is_number_unsigned()) {
      gpu.index = idx->get<uint32_t>();
    }
    if (!bus.empty()) known(&gpu.pci_bus_id, bus);
    if (!name.empty()) known(&gpu.name, name);
    if (!uuid.empty()) known(&gpu.uuid, uuid);
    if (auto mem = g.find("memory_total_bytes"); mem != g.end() && mem->is_number_unsigned()) {
      known(&gpu.memory_total_bytes, mem->get<uint64_t>());
    }
    in.snapshot.nvml.gpus.push_back(std::move(gpu));
  }
  in.snapshot.nvml.attempted = !in.snapshot.nvml.gpus.empty();
  for (size_t i = 0; i < findings.size(); ++i) {
    const json& f = findings[i];
    Finding out;
    std::string severity;
    if (!f.is_object() || !text(f, "id", &out.id) || !text(f, "severity", &severity) ||
        !text(f, "summary", &out.summary) || !text(f, "check", &out.check) || out.id.empty()) {
      return Error{"report: findings[" + std::to_string(i) + "] is not a finding"};
    }
    out.severity = severity_from_name(severity);
    if (auto g = f.find("gpus"); g != f.end() && g->is_array()) {
      for (const json& bus : *g) {
        if (bus.is_string()) out.gpus.push_back(bus.get<std::string>());
      }
    }
    in.report.findings.push_back(std::move(out));
  }
  return in;
}

}  // namespace gd
