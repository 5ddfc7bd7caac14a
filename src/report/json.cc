#include "report/container_command.h"
#include "report/gpus.h"
#include "report/render.h"
#include "snapshot/snapshot_json.h"

namespace gd {

nlohmann::ordered_json finding_to_json(const Finding& f) {
  nlohmann::ordered_json jf = {{"id", f.id},
                               {"severity", severity_name(f.severity)},
                               {"gpus", f.gpus},
                               {"summary", f.summary},
                               {"evidence", f.evidence},
                               {"remedy", f.remedy},
                               {"check", f.check}};
  if (!f.follows_from.empty()) jf["follows_from"] = f.follows_from;
  if (!f.ranked_by.empty()) jf["ranked_by"] = f.ranked_by;
  if (!f.signals.empty()) jf["signals"] = f.signals;
  if (!f.brief.empty()) jf["brief"] = f.brief;
  // Only where a check stated one, like follows_from: reports of checks that
  // compare nothing keep their v1 shape.
  if (!f.comparisons.empty()) {
    nlohmann::ordered_json cs = nlohmann::ordered_json::array();
    for (const Comparison& c : f.comparisons) {
      cs.push_back({{"what", c.what},
                    {"kind", c.kind},
                    {"actual", c.actual},
                    {"op", c.op},
                    {"required", c.required},
                    {"met", c.met}});
    }
    jf["comparisons"] = std::move(cs);
  }
  return jf;
}

nlohmann::ordered_json report_to_json(const Report& r) {
  nlohmann::ordered_json j;
  j["schema"] = r.schema;
  j["verdict"] = r.undecided ? "unknown" : severity_name(r.verdict);
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : r.findings) findings.push_back(finding_to_json(f));
  j["findings"] = std::move(findings);
  // Only when something was silenced: the report says what it leaves out.
  if (!r.only.empty() || !r.skip.empty()) j["silenced"] = {{"only", r.only}, {"skip", r.skip}};
  if (auto cmd = container_command(r)) {
    j["container_command"] = {
        {"engine", cmd->engine}, {"fixes", cmd->fixes}, {"lines", cmd->lines}};
  }
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  nlohmann::ordered_json probes = nlohmann::ordered_json::array();
  if (r.snapshot != nullptr) {
    j["host"] = r.snapshot->hostname;
    j["taken_at"] = r.snapshot->taken_at;
    j["tool_version"] = r.snapshot->tool_version;
    for (const auto& g : gpu_rows(*r.snapshot)) {
      nlohmann::ordered_json jg = {
          {"bus_id", g.bus_id}, {"name", g.name}, {"uuid", g.uuid}, {"driver", g.driver}};
      jg["nvml_index"] =
          g.nvml_index ? nlohmann::ordered_json(*g.nvml_index) : nlohmann::ordered_json();
      jg["cuda_index"] =
          g.cuda_index ? nlohmann::ordered_json(*g.cuda_index) : nlohmann::ordered_json();
      jg["memory_total_bytes"] = g.memory_total_bytes
                                     ? nlohmann::ordered_json(*g.memory_total_bytes)
                                     : nlohmann::ordered_json();
      gpus.push_back(std::move(jg));
    }
    for (const auto& p : r.snapshot->probes) {
      probes.push_back({{"name", p.name},
                        {"status", probe_status_name(p.status)},
                        {"detail", p.detail},
                        {"duration_ms", p.duration_ms}});
    }
  }
  j["gpus"] = std::move(gpus);
  j["probes"] = std::move(probes);
  return j;
}

std::string render_json(const Report& r) {
  return report_to_json(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace gd
