// Environment dumps: `env`, `export -p`, `docker inspect` Env lists, job
// script lines. Real lines this file reads:
//
//   CUDA_VISIBLE_DEVICES=1,x,0
//   export LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/lib
//   declare -x NVIDIA_DRIVER_CAPABILITIES="utility"
//   "NVIDIA_VISIBLE_DEVICES=all",
//
// Only what the env probe keeps is kept: its allow-list, its credential
// names denied, values not of their variable's kind as their shape
// (probe/env.cc), so a pasted dump never carries secrets into a report.
#include "explain/parse.h"
#include "probe/file_probes.h"

namespace gd {
namespace {

bool name_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

bool parse_env_line(std::string_view line, int line_no, TextParse* p) {
  std::string_view t = trim(line);
  for (std::string_view pre : {"export ", "declare -x ", "setenv "}) {
    if (t.starts_with(pre)) t = trim(t.substr(pre.size()));
  }
  if (!t.empty() && t.front() == '"') {
    t.remove_prefix(1);
    while (!t.empty() && (t.back() == ',' || t.back() == '"')) t.remove_suffix(1);
  }
  size_t eq = 0;
  while (eq < t.size() && name_char(t[eq])) ++eq;
  if (eq == 0 || eq >= t.size() || t[eq] != '=') return false;
  std::string_view name = t.substr(0, eq);
  if (!env_name_allowed(name)) return false;
  std::string_view value = t.substr(eq + 1);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  // A value with blanks is a sentence, not an assignment ("CUDA_HOME=... is set").
  if (value.find(' ') != std::string_view::npos && name != "NVIDIA_REQUIRE_CUDA") return false;
  p->s->env.vars[std::string(name)] = env_value_kept(name, value);
  p->observed.insert("env");
  (void)line_no;
  return true;
}

}  // namespace gd
