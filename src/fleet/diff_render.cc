// `gpudoctor diff` output: text for people, gpudoctor.diff/v1 JSON for tools.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "fleet/diff.h"
#include "fleet/xid_rate.h"
#include "util/text.h"

namespace gd {
namespace {

std::string list(const std::vector<std::string>& items) {
  return join_skip_leading_empty(items, ", ");
}

// A value with a space in quotes, so `has "not running"` reads as one value.
std::string quoted(const std::string& v) {
  return v.find(' ') == std::string::npos ? v : "\"" + v + "\"";
}

std::string nodes_text(const std::vector<std::string>& nodes) {
  return nodes.size() > 3 ? std::to_string(nodes.size()) + " nodes" : list(nodes);
}

// "finding xid.79: fail on gpu-node-02, gpu-node-03; not raised on 4 nodes":
// the problems first, named, whether they are the many or the few; then
// notes, then the healthy nodes.
std::string report_line(const std::string& label, const FieldDiff& f) {
  std::vector<std::string> parts;
  const std::vector<std::string> odd = f.odd_nodes();
  for (bool problem : {true, false}) {
    for (const ValueGroup& g : f.groups) {
      bool is_problem = std::find(odd.begin(), odd.end(), g.nodes.front()) != odd.end();
      if (is_problem != problem || g.value == f.healthy) continue;
      parts.push_back(quoted(g.value) + " on " + list(g.nodes));
    }
  }
  for (const ValueGroup& g : f.groups) {
    if (g.value == f.healthy) parts.push_back(f.healthy + " on " + nodes_text(g.nodes));
  }
  std::string out = label + ": ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

// "driver: 550.54.15 on 4 nodes; gpu-node-02 has 550.90.07"
// "driver: no majority: 550.54.15 on a, b; 550.90.07 on c, d"
std::string field_line(const FieldDiff& f, const std::string& label) {
  std::string out = label + ": ";
  if (f.same()) return out + "same (" + (f.groups.empty() ? "" : f.groups[0].value) + ")";
  if (f.problems()) return report_line(label, f);
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

// One line of the text per differing field, except that the GPUs differing
// alike in one field (the same values on the same nodes: a power limit
// changed on all eight GPUs of one node) share a line:
// "gpu 0000:18:00.0, 0000:2a:00.0 power_limit" or "8 GPUs power_limit".
struct Shown {
  const FieldDiff* field;
  std::string label;
};

std::string gpu_fold_key(const FieldDiff& f) {
  std::string key = f.field;
  for (const ValueGroup& g : f.groups) key += "\x1f" + g.value + "\x1e" + list(g.nodes);
  return key;
}

std::vector<Shown> shown_fields(const DiffResult& d, bool verbose) {
  std::map<std::string, std::vector<const FieldDiff*>> alike;
  for (const auto& f : d.fields) {
    if (f.scope == "gpu" && !f.same()) alike[gpu_fold_key(f)].push_back(&f);
  }
  std::vector<Shown> out;
  for (const auto& f : d.fields) {
    if (f.same() && !verbose) continue;
    if (f.scope != "gpu" || f.same()) {
      out.push_back({&f, f.label()});
      continue;
    }
    const auto& group = alike[gpu_fold_key(f)];
    if (group.size() == 1) {
      out.push_back({&f, f.label()});
    } else if (group.front() == &f) {
      std::vector<std::string> gpus;
      for (const FieldDiff* g : group) gpus.push_back(g->gpu);
      const std::string which =
          gpus.size() > 4 ? std::to_string(gpus.size()) + " GPUs" : "gpu " + list(gpus);
      out.push_back({&f, which + " " + f.field});
    }
  }
  return out;
}

// "Xid 79 x6, 48 x3": the codes, most frequent first.
std::string codes_text(const std::map<int, uint64_t>& codes) {
  std::vector<std::pair<int, uint64_t>> v(codes.begin(), codes.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [code, n] : v) parts.push_back(fmt::format("{} x{}", code, n));
  return "Xid " + join(parts, ", ");
}

// The Xid rate by driver section (docs/diff.md); "" when there is nothing
// to compare.
std::string xid_rate_text(const DiffResult& d) {
  std::vector<std::string> skipped;
  std::vector<DriverXidRate> rates = xid_rate_by_driver(d.nodes, &skipped);
  if (rates.empty()) return "";
  std::string out = "\nXid rate by driver (this boot's kernel logs):\n";
  for (const DriverXidRate& r : rates) {
    out += fmt::format("  {}: {} Xid event{} on {} node{} ({:.2f} per node", r.driver, r.events,
                       r.events == 1 ? "" : "s", r.nodes.size(), r.nodes.size() == 1 ? "" : "s",
                       r.per_node());
    if (r.events > 0) {
      out += fmt::format("; {} of {} nodes; {}", r.with_xids.size(), r.nodes.size(),
                         codes_text(r.codes));
    }
    out += ")\n";
  }
  for (const DriverXidRate& r : rates) {
    if (!r.stands_out) continue;
    out += fmt::format(
        "  {} stands out: {:.2f} Xid events per node against {:.2f} on the other drivers; "
        "consider rolling back to {}\n",
        r.driver, r.per_node(), r.others_per_node, r.rollback_to);
  }
  if (!skipped.empty()) out += "  not counted (kernel log not read): " + list(skipped) + "\n";
  return out;
}

nlohmann::json xid_rate_json(const DiffResult& d) {
  std::vector<std::string> skipped;
  nlohmann::json out = nlohmann::json::array();
  for (const DriverXidRate& r : xid_rate_by_driver(d.nodes, &skipped)) {
    nlohmann::json codes = nlohmann::json::object();
    for (const auto& [code, n] : r.codes) codes[std::to_string(code)] = n;
    out.push_back({{"driver", r.driver},
                   {"nodes", r.nodes},
                   {"nodes_with_xids", r.with_xids},
                   {"events", r.events},
                   {"per_node", r.per_node()},
                   {"codes", codes},
                   {"stands_out", r.stands_out},
                   {"rollback_to", r.stands_out ? nlohmann::json(r.rollback_to) : nullptr}});
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
  // node -> the fields it drifted in (outside the majority), and the report
  // fields where it has a problem (whether few or many nodes have it).
  std::map<std::string, std::vector<std::string>> odd, sick;
  std::vector<std::string> no_majority;
  for (const auto& f : d.fields) differ += f.same() ? 0 : 1;
  for (const Shown& s : shown_fields(d, opt.verbose)) {
    const FieldDiff& f = *s.field;
    if (!f.same()) {
      for (const auto& n : f.odd_nodes()) (f.problems() ? sick : odd)[n].push_back(s.label);
      if (f.majority < 0 && !f.problems()) no_majority.push_back(s.label);
    }
    out += field_line(f, s.label) + "\n";
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
  out += xid_rate_text(d);
  for (const auto& [title, by_node] : {std::pair{"Odd ones out", &odd}, {"Problems", &sick}}) {
    if (by_node->empty()) continue;
    out += std::string("\n") + title + ":\n";
    for (const auto& n : d.nodes) {
      auto it = by_node->find(n.name);
      if (it != by_node->end()) out += "  " + n.name + ": " + list(it->second) + "\n";
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
                     {"host", n.snapshot->hostname},
                     {"taken_at", n.snapshot->taken_at},
                     {"verdict", severity_name(n.report.verdict)},
                     {"findings", findings}});
  }
  nlohmann::json fields = nlohmann::json::array();
  std::map<std::string, std::vector<std::string>> odd, sick;
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
    // Report fields: the nodes with the problem ("problem_nodes"), never
    // called odd; the others: the nodes outside the majority.
    j[f.problems() ? "problem_nodes" : "odd_nodes"] = f.odd_nodes();
    for (const auto& n : f.odd_nodes()) (f.problems() ? sick : odd)[n].push_back(f.label());
    fields.push_back(std::move(j));
  }
  nlohmann::json odd_json = nlohmann::json::object();
  for (const auto& [n, labels] : odd) odd_json[n] = labels;
  nlohmann::json sick_json = nlohmann::json::object();
  for (const auto& [n, labels] : sick) sick_json[n] = labels;
  nlohmann::json doc = {{"schema", kDiffSchema},
                        {"drift", d.drift()},
                        {"nodes", nodes},
                        {"fields", fields},
                        {"odd_nodes", odd_json},
                        {"problem_nodes", sick_json},
                        {"xid_by_driver", xid_rate_json(d)}};
  return doc.dump(2) + "\n";
}

}  // namespace gd
