#include "diag/progress.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/text.h"

namespace gd {
namespace {

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? printable(it->get<std::string>(), 64) : "";
}

// The helper's line as JSON of the given type; null when it is not. A "type" that is
// not a string is a line of another kind, not an error: the helper's output is untrusted.
nlohmann::json parsed(std::string_view line, const char* type) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || text(j, "type") != type) return nullptr;
  return j;
}

// "memtest 0000:17:00.0", "gemm bf16 0000:17:00.0", "p2p 0000:17:00.0 -> 0000:2a:00.0",
// "nccl on 8 GPUs".
std::string test_name(const nlohmann::json& j) {
  std::string out = text(j, "test");
  for (const char* detail : {"dtype", "direction"}) {
    if (std::string d = text(j, detail); !d.empty()) out += " " + d;
  }
  if (std::string g = text(j, "gpu"); !g.empty()) out += " " + g;
  if (std::string s = text(j, "src"), d = text(j, "dst"); !s.empty() || !d.empty()) {
    out += " " + s + " -> " + d;
  }
  if (auto g = j.find("gpus"); g != j.end() && g->is_array()) {
    out += fmt::format(" on {} GPUs", g->size());
  }
  return out;
}

}  // namespace

std::string diag_progress_line(std::string_view helper_line) {
  nlohmann::json j = parsed(helper_line, "result");
  if (j.is_null()) return "";
  std::string status = text(j, "status");
  std::string out = fmt::format("  {:<5} {}", status.empty() ? "?" : status, test_name(j));
  auto ms = j.find("duration_ms");
  if (ms != j.end() && ms->is_number() && ms->get<double>() >= 0) {
    double s = ms->get<double>() / 1000;
    out += s < 10 ? fmt::format(" ({:.2f} s)", s) : fmt::format(" ({:.0f} s)", s);
  }
  return out;
}

std::string diag_started_test(std::string_view helper_line) {
  nlohmann::json j = parsed(helper_line, "start");
  return j.is_null() ? "" : test_name(j);
}

}  // namespace gd
