// CDI spec reading (cdi.h). nvidia-ctk writes YAML by default and JSON on
// request; the container engines read both. gpudoctor does not link a YAML
// library into the core (only gpudoctor-serve carries one), so the YAML
// side is a reader for the block subset a generated spec uses: indentation,
// "key: value", "- " sequence items, quoted scalars. It never fails on what
// it does not understand: lines it cannot place are skipped, and a spec it
// reads nothing useful from is an error.
#include "probe/cdi.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "util/text.h"

namespace gd {
namespace {

std::string unquote(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return std::string(v);
}

void add_edits(const nlohmann::json& edits, CdiSpec* s) {
  if (!edits.is_object()) return;
  if (auto n = edits.find("deviceNodes"); n != edits.end() && n->is_array()) {
    for (const auto& d : *n) {
      if (d.is_object() && d.contains("path") && d["path"].is_string())
        s->device_nodes.push_back(d["path"].get<std::string>());
    }
  }
  if (auto m = edits.find("mounts"); m != edits.end() && m->is_array()) {
    for (const auto& d : *m) {
      if (d.is_object() && d.contains("hostPath") && d["hostPath"].is_string())
        s->host_paths.push_back(d["hostPath"].get<std::string>());
    }
  }
}

Result<CdiSpec> parse_json(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"not a JSON object"};
  CdiSpec s;
  if (j.contains("kind") && j["kind"].is_string()) s.kind = j["kind"].get<std::string>();
  if (auto d = j.find("devices"); d != j.end() && d->is_array()) {
    for (const auto& dev : *d) {
      if (!dev.is_object()) continue;
      if (dev.contains("name") && dev["name"].is_string())
        s.devices.push_back(dev["name"].get<std::string>());
      if (dev.contains("containerEdits")) add_edits(dev["containerEdits"], &s);
    }
  }
  if (j.contains("containerEdits")) add_edits(j["containerEdits"], &s);
  return s;
}

struct Level {
  size_t indent;
  std::string key;
};

bool under(const std::vector<Level>& stack, std::string_view key) {
  for (const Level& l : stack) {
    if (l.key == key) return true;
  }
  return false;
}

Result<CdiSpec> parse_yaml(std::string_view text) {
  CdiSpec s;
  std::vector<Level> stack;  // the mapping keys enclosing the current line
  for (std::string_view line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    std::string_view rest = line.substr(indent);
    if (rest.starts_with('#') || rest.starts_with("---") || rest.starts_with("...")) continue;
    // "- key: value" opens an item whose keys sit two columns further in.
    while (rest.starts_with("- ") || rest == "-") {
      indent += 2;
      rest = rest.size() > 1 ? rest.substr(2) : std::string_view();
      size_t more = rest.find_first_not_of(' ');
      if (more == std::string_view::npos) break;
      indent += more;
      rest = rest.substr(more);
    }
    while (!stack.empty() && stack.back().indent >= indent) stack.pop_back();
    size_t colon = rest.find(": ");
    std::string_view key = colon == std::string_view::npos ? rest : rest.substr(0, colon);
    if (colon == std::string_view::npos) {
      if (!key.ends_with(':')) continue;  // a bare sequence scalar (env, args)
      key.remove_suffix(1);
      stack.push_back({indent, std::string(key)});
      continue;
    }
    std::string value = unquote(rest.substr(colon + 2));
    if (key == "kind" && stack.empty()) {
      s.kind = value;
    } else if (key == "name" && under(stack, "devices") && !under(stack, "containerEdits")) {
      s.devices.push_back(value);
    } else if (key == "path" && under(stack, "deviceNodes")) {
      s.device_nodes.push_back(value);
    } else if (key == "hostPath" && under(stack, "mounts")) {
      s.host_paths.push_back(value);
    }
    // A key with an inline value opens nothing below it.
  }
  if (s.kind.empty()) return Error{"no \"kind:\" at the top level"};
  return s;
}

}  // namespace

Result<CdiSpec> parse_cdi_spec(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Error{"empty"};
  auto parsed = text[first] == '{' ? parse_json(text) : parse_yaml(text);
  if (!parsed.ok()) return parsed;
  if (parsed->kind.empty()) return Error{"no \"kind\""};
  return parsed;
}

}  // namespace gd
