// The options object of gpudoctor_preflight / gpudoctor_cuda_available:
//   {"root": "/", "cuda_lib": "/opt/lib/libcuda.so.1", "deadline_s": 5,
//    "only": ["cuda", "devnodes"], "skip": "thermal.high,p2p", "log_window": "30m"}
// A key the function does not use is an error, so a typo (or an option
// the installed library is too old for) never silently does nothing.
#include <sys/stat.h>

#include <cmath>
#include <set>

#include "lib/lib_internal.h"
#include "util/duration.h"
#include "util/text.h"

namespace gd::lib {
namespace {

using json = nlohmann::json;

Result<json> parse_object(const char* options_json) {
  if (options_json == nullptr || *options_json == '\0') return json::object();
  json j = json::parse(options_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{"options: not valid JSON"};
  if (!j.is_object()) return Error{"options: expected a JSON object, got " + j.dump()};
  return j;
}

// Every key must be one of `known`; the error lists them.
Result<bool> only_known_keys(const json& j, const std::set<std::string>& known) {
  for (const auto& [key, value] : j.items()) {
    if (known.count(key) != 0) continue;
    return Error{"options: unknown key '" + key +
                 "' (known: " + join_skip_leading_empty(known, ", ") + ")"};
  }
  return true;
}

Result<std::string> get_string(const json& j, const char* key, std::string fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) return Error{std::string("options: '") + key + "' must be a string"};
  return it->get<std::string>();
}

Result<double> get_deadline(const json& j, double fallback) {
  auto it = j.find("deadline_s");
  if (it == j.end() || it->is_null()) return fallback;
  // The CLI's --deadline range: under 0.1 s not even a healthy cuInit answers.
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0.1 ||
      it->get<double>() > 600) {
    return Error{"options: 'deadline_s' must be a number of seconds from 0.1 to 600"};
  }
  return it->get<double>();
}

// ["a", "b"] or "a,b" (the CLI's form); empty items dropped.
Result<std::vector<std::string>> get_list(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  auto add = [&out](const std::string& s) {
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      if (comma == std::string::npos) comma = s.size();
      if (comma > start) out.push_back(s.substr(start, comma - start));
      start = comma + 1;
    }
  };
  std::string bad = std::string("options: '") + key + "' must be a list of strings";
  if (it->is_string()) {
    add(it->get<std::string>());
  } else if (it->is_array()) {
    for (const auto& item : *it) {
      if (!item.is_string()) return Error{bad};
      add(item.get<std::string>());
    }
  } else {
    return Error{bad};
  }
  return out;
}

// `auto var = *expr;` or return its error.
// `var` names a variable: it cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define GD_TRY(var, expr)                           \
  auto var##_r = (expr);                            \
  if (!var##_r.ok()) return Error{var##_r.error()}; \
  auto var = std::move(*var##_r)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace

Result<PreflightOptions> parse_preflight_options(const char* options_json) {
  GD_TRY(j, parse_object(options_json));
  auto known = only_known_keys(j, {"root", "nvml_lib", "cuda_lib", "cudart_lib", "deadline_s",
                                   "config", "only", "skip", "log_window"});
  if (!known.ok()) return Error{known.error()};
  PreflightOptions o;
  GD_TRY(root, get_string(j, "root", o.probe.root));
  struct stat st {};
  if (root.empty() || stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error{"options: 'root' is not a directory: " + root};
  }
  o.probe.root = root;
  GD_TRY(nvml_lib, get_string(j, "nvml_lib", o.probe.nvml_lib));
  GD_TRY(cuda_lib, get_string(j, "cuda_lib", o.probe.cuda_lib));
  GD_TRY(cudart_lib, get_string(j, "cudart_lib", o.probe.cudart_lib));
  GD_TRY(deadline, get_deadline(j, o.probe.deadline_s));
  GD_TRY(config, get_string(j, "config", ""));
  GD_TRY(only, get_list(j, "only"));
  GD_TRY(skip, get_list(j, "skip"));
  o.probe.nvml_lib = nvml_lib;
  o.probe.cuda_lib = cuda_lib;
  o.probe.cudart_lib = cudart_lib;
  o.probe.deadline_s = deadline;
  o.config = config;
  o.only = std::move(only);
  o.skip = std::move(skip);
  auto window = j.find("log_window");
  if (window != j.end() && !window->is_null()) {
    std::string bad = "options: 'log_window' must be a duration (\"2h\", \"30m\") or seconds";
    if (window->is_number()) {
      double s = window->get<double>();
      if (!std::isfinite(s) || s < 0) return Error{bad};
      o.log_window_s = s;
    } else if (window->is_string()) {
      auto s = parse_duration(window->get<std::string>());
      if (!s.ok()) return Error{"options: 'log_window': " + s.error()};
      o.log_window_s = *s;
    } else {
      return Error{bad};
    }
  }
  return o;
}

Result<CudaOptions> parse_cuda_options(const char* options_json) {
  GD_TRY(j, parse_object(options_json));
  auto known = only_known_keys(j, {"cuda_lib", "cudart_lib", "deadline_s"});
  if (!known.ok()) return Error{known.error()};
  CudaOptions o;
  GD_TRY(cuda_lib, get_string(j, "cuda_lib", o.cuda_lib));
  GD_TRY(cudart_lib, get_string(j, "cudart_lib", o.cudart_lib));
  GD_TRY(deadline, get_deadline(j, o.deadline_s));
  o.cuda_lib = cuda_lib;
  o.cudart_lib = cudart_lib;
  o.deadline_s = deadline;
  return o;
}

}  // namespace gd::lib
