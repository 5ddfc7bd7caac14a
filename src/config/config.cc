// The config file, as docs/config.md documents it, e.g.:
//
//   [thermal]
//   gpu_margin_c = 5          # warn within 5 °C of the GPU's slowdown temperature
//   gpu_warn_c = 85           # or: warn at 85 °C, whatever the GPU says
//
//   [ecc]
//   pending = "fail"          # a pending row remap fails the node
//
//   [pcie]
//   load_utilization_pct = 50
//
//   [model."RTX 4090"]        # GPUs whose NVML name contains "RTX 4090"
//   thermal.gpu_warn_c = 83
//
// Every key is checked: an unknown key, a wrong type or a value out of
// range is an error naming the file, the line and the key, never ignored
// (a misspelt threshold silently left at its default is worse than none).
// toml++ throws on a syntax error; the exception stays in this file.
#include "config/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>

#include "util/ascii.h"
#include "util/bytes.h"
#include "util/read_file.h"
#include "util/text.h"

namespace gd {

namespace {

// One problem, at a line of the file.
struct Problem {
  uint32_t line = 0;
  std::string text;  // "thermal.gpu_margn_c: unknown key (known: ...)"
};

struct Parser {
  std::string name;  // the file as the user named it
  std::vector<Problem> problems;

  // The text quotes keys and values from the file as written, escapes and
  // all ("war\\n" is a newline): it is made printable here, once, so the
  // error stays one line whatever the file holds.
  void add(const toml::source_region& where, std::string_view text) {
    problems.push_back({where.begin.line, printable(text, 512)});
  }
};

const char* type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

// The keys of a table section, what they hold and where they go. Integers
// carry their range; a severity is "info", "warn" or "fail".
enum class Kind { kInt, kSeverity };
using IntSetter = void (*)(HealthThresholds*, int64_t);
using SeveritySetter = void (*)(HealthThresholds*, ConfigSeverity);
struct KeySpec {
  const char* name;
  Kind kind;
  int64_t min;
  int64_t max;
  IntSetter set_int;
  SeveritySetter set_severity;
};
struct Section {
  const char* name;
  std::vector<KeySpec> keys;
};

// clang-format off
const std::vector<Section>& sections() {
  static const std::vector<Section> kSections = {
    {"thermal", {
      {"gpu_margin_c", Kind::kInt, 0, 50, [](HealthThresholds* t, int64_t v) { t->gpu_margin_c = static_cast<int>(v); }, nullptr},
      {"gpu_warn_c", Kind::kInt, 0, 150, [](HealthThresholds* t, int64_t v) { t->gpu_warn_c = static_cast<int>(v); }, nullptr},
      {"gpu_fail_c", Kind::kInt, 0, 150, [](HealthThresholds* t, int64_t v) { t->gpu_fail_c = static_cast<int>(v); }, nullptr},
      {"memory_margin_c", Kind::kInt, 0, 50, [](HealthThresholds* t, int64_t v) { t->memory_margin_c = static_cast<int>(v); }, nullptr},
      {"memory_warn_c", Kind::kInt, 0, 150, [](HealthThresholds* t, int64_t v) { t->memory_warn_c = static_cast<int>(v); }, nullptr},
      {"memory_fail_c", Kind::kInt, 0, 150, [](HealthThresholds* t, int64_t v) { t->memory_fail_c = static_cast<int>(v); }, nullptr},
    }},
    {"power", {
      {"limit_info_pct", Kind::kInt, 0, 100, [](HealthThresholds* t, int64_t v) { t->power_limit_info_pct = static_cast<int>(v); }, nullptr},
      {"brake", Kind::kSeverity, 0, 0, nullptr, [](HealthThresholds* t, ConfigSeverity s) { t->power_brake = s; }},
    }},
    {"clocks", {
      {"hw_thermal", Kind::kSeverity, 0, 0, nullptr, [](HealthThresholds* t, ConfigSeverity s) { t->hw_thermal = s; }},
      {"hw_slowdown", Kind::kSeverity, 0, 0, nullptr, [](HealthThresholds* t, ConfigSeverity s) { t->hw_slowdown = s; }},
      {"sw_thermal", Kind::kSeverity, 0, 0, nullptr, [](HealthThresholds* t, ConfigSeverity s) { t->sw_thermal = s; }},
    }},
    {"ecc", {
      {"uncorrected_fail", Kind::kInt, 1, 1000000000, [](HealthThresholds* t, int64_t v) { t->ecc_uncorrected_fail = static_cast<uint64_t>(v); }, nullptr},
      {"corrected_warn", Kind::kInt, 0, 1000000000000, [](HealthThresholds* t, int64_t v) { t->ecc_corrected_warn = static_cast<uint64_t>(v); }, nullptr},
      {"retired_pages_fail", Kind::kInt, 1, 100000, [](HealthThresholds* t, int64_t v) { t->retired_pages_fail = static_cast<uint32_t>(v); }, nullptr},
      {"pending", Kind::kSeverity, 0, 0, nullptr, [](HealthThresholds* t, ConfigSeverity s) { t->pending = s; }},
    }},
  };
  return kSections;
}
// clang-format on

// [pcie] is read by whole-node checks, so it has no per-model form.
struct PcieKey {
  const char* name;
  int64_t min;
  int64_t max;
  int Config::*field;
};
const PcieKey kPcieKeys[] = {
    {"load_utilization_pct", 0, 100, &Config::pcie_load_utilization_pct},
    {"corrected_warn_count", 1, 1000000, &Config::pcie_corrected_warn_count},
};

template <class Specs>
std::string known_list(const Specs& specs) {
  std::string out;
  for (const auto& k : specs) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

std::string quoted_key(std::string_view k) {
  bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
  });
  return bare ? std::string(k) : fmt::format("\"{}\"", k);
}

// An integer within [min, max]; false (with the problem noted) otherwise.
bool read_int(Parser* p, const std::string& path, const toml::node& v, int64_t min, int64_t max,
              int64_t* out) {
  if (!v.is_integer()) {
    p->add(v.source(), fmt::format("{}: expected an integer, got {}{}", path, type_name(v.type()),
                                   v.is_floating_point() ? " (write 85, not 85.0)" : ""));
    return false;
  }
  int64_t n = v.as_integer()->get();
  if (n < min || n > max) {
    p->add(v.source(), fmt::format("{}: {} is out of range ({}..{})", path, n, min, max));
    return false;
  }
  *out = n;
  return true;
}

bool read_severity(Parser* p, const std::string& path, const toml::node& v, ConfigSeverity* out) {
  const auto* str = v.as_string();
  std::string_view text = str != nullptr ? std::string_view(str->get()) : std::string_view();
  if (text == "info") {
    *out = ConfigSeverity::kInfo;
  } else if (text == "warn") {
    *out = ConfigSeverity::kWarn;
  } else if (text == "fail") {
    *out = ConfigSeverity::kFail;
  } else {
    p->add(v.source(), str != nullptr ? fmt::format("{}: expected \"info\", \"warn\" or \"fail\", "
                                                    "got \"{}\"",
                                                    path, text)
                                      : fmt::format("{}: expected \"info\", \"warn\" or \"fail\", "
                                                    "got {}",
                                                    path, type_name(v.type())));
    return false;
  }
  return true;
}

// The keys of one threshold section ([thermal], [model."X".thermal], ...).
void read_section(Parser* p, const Section& sec, const std::string& prefix, const toml::node& node,
                  const toml::source_region& key_at, HealthThresholds* t) {
  const toml::table* tbl = node.as_table();
  if (tbl == nullptr) {
    p->add(key_at, fmt::format("{}: expected a table ([{}]), got {}", prefix, prefix,
                               type_name(node.type())));
    return;
  }
  for (const auto& [k, v] : *tbl) {
    std::string path = prefix + "." + quoted_key(k.str());
    std::string_view name = k.str();  // lambdas cannot capture bindings before C++20's fix
    auto spec = std::find_if(sec.keys.begin(), sec.keys.end(),
                             [&](const KeySpec& s) { return name == s.name; });
    if (spec == sec.keys.end()) {
      p->add(k.source(), fmt::format("{}: unknown key (known: {})", path, known_list(sec.keys)));
      continue;
    }
    if (spec->kind == Kind::kInt) {
      int64_t n = 0;
      if (read_int(p, path, v, spec->min, spec->max, &n)) spec->set_int(t, n);
    } else {
      ConfigSeverity s{};
      if (read_severity(p, path, v, &s)) spec->set_severity(t, s);
    }
  }
}

const Section* find_section(std::string_view name) {
  for (const auto& s : sections()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

void read_pcie(Parser* p, const toml::node& node, const toml::source_region& key_at, Config* c) {
  const toml::table* tbl = node.as_table();
  if (tbl == nullptr) {
    p->add(key_at, fmt::format("pcie: expected a table ([pcie]), got {}", type_name(node.type())));
    return;
  }
  for (const auto& [k, v] : *tbl) {
    std::string path = "pcie." + quoted_key(k.str());
    std::string_view name = k.str();  // lambdas cannot capture bindings before C++20's fix
    auto spec = std::find_if(std::begin(kPcieKeys), std::end(kPcieKeys),
                             [&](const PcieKey& s) { return name == s.name; });
    if (spec == std::end(kPcieKeys)) {
      p->add(k.source(), fmt::format("{}: unknown key (known: {})", path, known_list(kPcieKeys)));
      continue;
    }
    int64_t n = 0;
    if (read_int(p, path, v, spec->min, spec->max, &n)) c->*(spec->field) = static_cast<int>(n);
  }
}

// [checks] only = [...], skip = [...]: lists of strings; what they name is
// checked where the checks are selected (checks/runner.h).
void read_checks(Parser* p, const toml::node& node, const toml::source_region& key_at, Config* c) {
  const toml::table* tbl = node.as_table();
  if (tbl == nullptr) {
    p->add(key_at,
           fmt::format("checks: expected a table ([checks]), got {}", type_name(node.type())));
    return;
  }
  for (const auto& [k, v] : *tbl) {
    std::string path = "checks." + quoted_key(k.str());
    std::vector<std::string>* list = k.str() == "only"   ? &c->only
                                     : k.str() == "skip" ? &c->skip
                                                         : nullptr;
    if (list == nullptr) {
      p->add(k.source(), fmt::format("{}: unknown key (known: only, skip)", path));
      continue;
    }
    const toml::array* a = v.as_array();
    if (a == nullptr) {
      p->add(v.source(),
             fmt::format("{}: expected a list of strings, got {}", path, type_name(v.type())));
      continue;
    }
    for (const toml::node& item : *a) {
      if (const auto* str = item.as_string()) {
        list->emplace_back(str->get());
      } else {
        p->add(item.source(), fmt::format("{}: expected a list of strings, got an item of type {}",
                                          path, type_name(item.type())));
      }
    }
  }
}

// [model."RTX 4090"] tables: each starts from the top-level thresholds.
void read_models(Parser* p, const toml::node& node, const toml::source_region& key_at, Config* c) {
  const toml::table* tbl = node.as_table();
  if (tbl == nullptr) {
    p->add(key_at, fmt::format("model: expected tables like [model.\"RTX 4090\"], got {}",
                               type_name(node.type())));
    return;
  }
  std::vector<std::string> seen;  // lower-cased, for case-only duplicates
  for (const auto& [k, v] : *tbl) {
    std::string prefix = "model." + fmt::format("\"{}\"", k.str());
    if (k.str().empty()) {
      p->add(k.source(), prefix + ": empty model text would match every GPU");
      continue;
    }
    std::string folded = ascii_lower(k.str());
    if (std::find(seen.begin(), seen.end(), folded) != seen.end()) {
      p->add(k.source(), prefix +
                             ": the same text as another model section (matching ignores "
                             "case)");
      continue;
    }
    seen.push_back(folded);
    const toml::table* mt = v.as_table();
    if (mt == nullptr) {
      p->add(k.source(), fmt::format("{}: expected a table, got {}", prefix, type_name(v.type())));
      continue;
    }
    ModelThresholds m{std::string(k.str()), c->health};
    for (const auto& [sk, sv] : *mt) {
      std::string sub = prefix + "." + quoted_key(sk.str());
      if (sk.str() == "pcie") {
        p->add(sk.source(), sub + ": not per model; set it in [pcie] at the top level");
        continue;
      }
      const Section* sec = find_section(sk.str());
      if (sec == nullptr) {
        p->add(sk.source(),
               fmt::format("{}: unknown key (known: thermal, power, clocks, ecc)", sub));
        continue;
      }
      read_section(p, *sec, sub, sv, sk.source(), &m.thresholds);
    }
    c->models.push_back(std::move(m));
  }
}

// Deeper than this, a config is refused before toml++ sees it: toml++
// recurses once per part of a dotted key, and 100,000 parts overflow the
// stack (SIGSEGV). The deepest real key has 4 parts
// (model."RTX 4090".thermal.gpu_warn_c); arrays and inline tables count too.
constexpr int kMaxDepth = 32;

// The line where a key or a value first nests deeper than kMaxDepth, 0 when
// nothing does. A lexer just good enough for that: it skips strings (all
// four kinds) and comments, counts open [ and {, and counts the parts of the
// dotted key being read (the dots since the last = , [ ] { } or newline; a
// float such as 1.5 counts one).
uint32_t too_deep_line(std::string_view t) {
  uint32_t line = 1;
  int brackets = 0;  // open [ and { outside strings
  int dots = 0;      // dots of the current key
  size_t i = 0;
  auto starts = [&](std::string_view s) { return t.substr(i, s.size()) == s; };
  // Skips a string starting at i (at its quote); counts the lines it spans.
  auto skip_string = [&] {
    bool basic = t[i] == '"';
    std::string_view close = basic ? "\"\"\"" : "'''";
    bool multi = starts(close);
    i += multi ? 3 : 1;
    while (i < t.size()) {
      if (basic && t[i] == '\\') {
        i += 2;
        continue;
      }
      if (t[i] == '\n') {
        if (!multi) return;  // an unterminated string: toml++ says so
        ++line;
      }
      if (multi ? starts(close) : t[i] == close[0]) {
        i += multi ? 3 : 1;
        return;
      }
      ++i;
    }
  };
  while (i < t.size()) {
    char ch = t[i];
    if (ch == '"' || ch == '\'') {
      skip_string();
      continue;
    }
    if (ch == '#') {
      while (i < t.size() && t[i] != '\n') ++i;
      continue;
    }
    switch (ch) {
      case '\n':
        ++line;
        dots = 0;
        break;
      case '[':
      case '{':
        ++brackets;
        dots = 0;
        break;
      case ']':
      case '}':
        brackets = std::max(0, brackets - 1);
        dots = 0;
        break;
      case '=':
      case ',':
        dots = 0;
        break;
      case '.':
        ++dots;
        break;
      default:
        break;
    }
    if (brackets + dots + 1 > kMaxDepth) return line;
    ++i;
  }
  return 0;
}

}  // namespace

Result<Config> parse_config(std::string_view text, const std::string& name) {
  Config c;
  c.source = name;
  // The same caps for text that did not come from load_config (the fuzzer).
  if (text.size() > kConfigCapBytes) {
    return Error{fmt::format("{}: over the {} limit for a config file", name,
                             format_bytes_exact(kConfigCapBytes))};
  }
  if (uint32_t line = too_deep_line(text); line != 0) {
    return Error{fmt::format("{}:{}: keys or values nest deeper than {} levels (the limit)", name,
                             line, kMaxDepth)};
  }
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    // toml++ quotes the offending text as it is, newlines and all: the
    // error stays one printable line.
    return Error{fmt::format("{}:{}:{}: {}", name, e.source().begin.line, e.source().begin.column,
                             printable(e.description(), 200))};
  }
  Parser p;
  p.name = name;
  // Top-level thresholds first: the model sections start from them,
  // whatever their order in the file.
  for (const auto& [k, v] : doc) {
    if (k.str() == "model") continue;
    if (k.str() == "pcie") {
      read_pcie(&p, v, k.source(), &c);
      continue;
    }
    if (k.str() == "checks") {
      read_checks(&p, v, k.source(), &c);
      continue;
    }
    const Section* sec = find_section(k.str());
    if (sec == nullptr) {
      p.add(k.source(), fmt::format("{}: unknown key (known tables: thermal, power, clocks, ecc, "
                                    "pcie, checks, model)",
                                    quoted_key(k.str())));
      continue;
    }
    read_section(&p, *sec, sec->name, v, k.source(), &c.health);
  }
  if (const toml::node* models = doc.get("model")) {
    const toml::source_region at = models->source();
    read_models(&p, *models, at, &c);
  }
  if (!p.problems.empty()) {
    std::stable_sort(p.problems.begin(), p.problems.end(),
                     [](const Problem& a, const Problem& b) { return a.line < b.line; });
    const Problem& first = p.problems.front();
    std::string more =
        p.problems.size() > 1 ? fmt::format(" (and {} more)", p.problems.size() - 1) : "";
    return Error{fmt::format("{}:{}: {}{}", name, first.line, first.text, more)};
  }
  return c;
}

Result<Config> load_config(const std::string& path) {
  if (path.empty()) return Config{};
  // Capped while reading: --config /dev/zero is an error, not all of memory.
  auto text = read_file_capped(path, kConfigCapBytes);
  if (!text.ok()) {
    return Error{fmt::format("{}: cannot read the config file: {}", path, text.error())};
  }
  return parse_config(*text, path);
}

std::string config_path(const std::string& flag, const char* env_value) {
  if (!flag.empty()) return flag;
  if (env_value != nullptr) return env_value;
  return "";
}

const HealthThresholds& thresholds_for(const Config& c, std::string_view gpu_name) {
  const ModelThresholds* best = nullptr;
  for (const auto& m : c.models) {
    if (!contains_nocase(gpu_name, m.match)) continue;
    if (best == nullptr || m.match.size() > best->match.size() ||
        (m.match.size() == best->match.size() && m.match < best->match)) {
      best = &m;
    }
  }
  return best != nullptr ? best->thresholds : c.health;
}

const char* config_severity_name(ConfigSeverity s) {
  switch (s) {
    case ConfigSeverity::kInfo:
      return "info";
    case ConfigSeverity::kWarn:
      return "warn";
    case ConfigSeverity::kFail:
      return "fail";
  }
  return "warn";
}

}  // namespace gd
