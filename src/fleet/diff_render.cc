// `gpudoctor diff` output: text for people, gpudoctor.diff/v1 JSON for tools.
#include <map>
#include <nlohmann/json.hpp>

#include "fleet/diff.h"

namespace gd {
namespace {

std::string list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// A value with a space in quotes, so `has "not running"` reads as one value.
std::string quoted(const std::string& v) {
  return v.find(' ') == std::string::npos ? v : "\"" + v + "\"";
}

// "driver: 550.54.15 on 4 nodes; gpu-node-02 has 550.90.07"
// "driver: no majority: 550.54.15 on a, b; 550.90.07 on c, d"
std::string field_line(const FieldDiff& f) {
  std::string out = f.label() + ": ";
  if (f.same()) return out + "same (" + (f.groups.empty() ? "" : f.groups[0].value) + ")";
  if (f.majority < 0) {
    out += "no majority: ";
    for (size_t i = 0; i < f.groups.size(); ++i) {
      out += (i ? "; " : "") + quoted(f.groups[i].value) + " on " + list(f.groups[i].nodes);
    }
    return out;
  }
  const ValueGroup& m = f.groups[static_cast<size_t>(f.majority)];
  out += quoted(m.value) + " on " + std::to_string(m.nodes.size()) + " nodes";
  for (size_t i = 0; i < f.groups.size(); ++i) {
    if (static_cast<int>(i) == f.majority) continue;
    const ValueGroup& g = f.groups[i];
    out += "; " + list(g.nodes) + (g.nodes.size() == 1 ? " has " : " have ") + quoted(g.value);
  }
  return out;
}

}  // namespace

std::string render_diff_text(const DiffResult& d, const DiffRenderOptions& opt) {
  std::vector<std::string> names;
  for (const auto& n : d.nodes) names.push_back(n.name);
  std::string out =
      "gpudoctor diff: " + std::to_string(d.nodes.size()) + " nodes: " + list(names) + "\n\n";
  size_t differ = 0;
  std::map<std::string, std::vector<std::string>> odd;  // node -> fields it is odd in
  std::vector<std::string> no_majority;
  for (const auto& f : d.fields) {
    if (!f.same()) {
      ++differ;
      for (const auto& n : f.odd_nodes()) odd[n].push_back(f.label());
      if (f.majority < 0) no_majority.push_back(f.label());
    }
    if (!f.same() || opt.verbose) out += field_line(f) + "\n";
  }
  // Every node failing alike is no drift, but it must not pass unsaid.
  for (const auto& f : d.fields) {
    if (f.scope == "report" && f.field == "verdict" && f.same() && !f.groups.empty() &&
        (f.groups[0].value == "warn" || f.groups[0].value == "fail") && !opt.verbose) {
      out += "verdict: " + f.groups[0].value + " on every node (gpudoctor check --from FILE " +
             "tells why)\n";
    }
  }
  if (differ == 0) {
    out += "No drift: the " + std::to_string(d.nodes.size()) + " nodes agree on all " +
           std::to_string(d.fields.size()) + " fields compared.\n";
    return out;
  }
  if (!odd.empty()) {
    out += "\nOdd ones out:\n";
    for (const auto& n : d.nodes) {
      auto it = odd.find(n.name);
      if (it != odd.end()) out += "  " + n.name + ": " + list(it->second) + "\n";
    }
  }
  if (!no_majority.empty())
    out += "\nNo majority (no node is the odd one out): " + list(no_majority) + "\n";
  out += "\nDrift: " + std::to_string(differ) + " of " + std::to_string(d.fields.size()) +
         " fields differ.\n";
  return out;
}

std::string render_diff_json(const DiffResult& d) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : d.nodes) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : n.report.findings) {
      if (severity_weight(f.severity) < severity_weight(Severity::kInfo)) continue;
      findings.push_back({{"id", f.id}, {"severity", severity_name(f.severity)}, {"gpus", f.gpus}});
    }
    nodes.push_back({{"name", n.name},
                     {"file", n.file},
                     {"hostname", n.snapshot->hostname},
                     {"taken_at", n.snapshot->taken_at},
                     {"verdict", severity_name(n.report.verdict)},
                     {"findings", findings}});
  }
  nlohmann::json fields = nlohmann::json::array();
  std::map<std::string, std::vector<std::string>> odd;
  for (const auto& f : d.fields) {
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : f.groups) groups.push_back({{"value", g.value}, {"nodes", g.nodes}});
    nlohmann::json j = {{"field", f.field}, {"scope", f.scope}};
    if (f.scope == "gpu") j["gpu"] = f.gpu;
    j["label"] = f.label();
    j["same"] = f.same();
    j["majority"] = f.majority < 0
                        ? nlohmann::json(nullptr)
                        : nlohmann::json(f.groups[static_cast<size_t>(f.majority)].value);
    j["groups"] = groups;
    j["odd_nodes"] = f.odd_nodes();
    for (const auto& n : f.odd_nodes()) odd[n].push_back(f.label());
    fields.push_back(std::move(j));
  }
  nlohmann::json odd_json = nlohmann::json::object();
  for (const auto& [n, labels] : odd) odd_json[n] = labels;
  nlohmann::json doc = {{"schema", kDiffSchema},
                        {"drift", d.drift()},
                        {"nodes", nodes},
                        {"fields", fields},
                        {"odd_nodes", odd_json}};
  return doc.dump(2) + "\n";
}

}  // namespace gd
