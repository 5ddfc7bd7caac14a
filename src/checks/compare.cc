#include "checks/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "checks/util.h"
#include "util/bytes.h"

namespace gd {
namespace {

// One dotted part: digits only. "03" is 3 (driver versions print leading
// zeros: 560.35.03).
std::optional<uint64_t> part_value(std::string_view p) {
  if (p.empty() || p.size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::optional<std::vector<uint64_t>> version_parts(std::string_view v) {
  std::vector<uint64_t> out;
  size_t start = 0;
  while (true) {
    size_t dot = v.find('.', start);
    auto p = part_value(v.substr(start, dot == std::string_view::npos ? v.npos : dot - start));
    if (!p) return std::nullopt;
    out.push_back(*p);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

std::string number_text(double v) {
  char buf[40];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

int three_way(double a, double b) { return a < b ? -1 : (a > b ? 1 : 0); }

}  // namespace

std::optional<int> compare_version_text(std::string_view a, std::string_view b) {
  auto pa = version_parts(a);
  auto pb = version_parts(b);
  if (!pa || !pb) return std::nullopt;
  size_t n = std::max(pa->size(), pb->size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = i < pa->size() ? (*pa)[i] : 0;
    uint64_t y = i < pb->size() ? (*pb)[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool op_holds(int cmp, std::string_view op) {
  if (op == "<") return cmp < 0;
  if (op == "<=") return cmp <= 0;
  if (op == "==") return cmp == 0;
  if (op == "!=") return cmp != 0;
  if (op == ">=") return cmp >= 0;
  if (op == ">") return cmp > 0;
  return false;
}

Comparison compare_versions(std::string what, std::string actual, std::string op,
                            std::string required) {
  Comparison c{std::move(what), "version",           std::move(actual),
               std::move(op),   std::move(required), false};
  auto cmp = compare_version_text(c.actual, c.required);
  c.met = cmp && op_holds(*cmp, c.op);
  return c;
}

Comparison compare_bytes(std::string what, uint64_t actual, std::string op, uint64_t required) {
  Comparison c{std::move(what),          "bytes", std::to_string(actual), std::move(op),
               std::to_string(required), false};
  c.met = op_holds(actual < required ? -1 : (actual > required ? 1 : 0), c.op);
  return c;
}

Comparison compare_numbers(std::string what, double actual, std::string op, double required) {
  Comparison c{std::move(what),       "number", number_text(actual), std::move(op),
               number_text(required), false};
  // Decide on the printed values: the JSON reader sees only those.
  double a = std::strtod(c.actual.c_str(), nullptr);
  double r = std::strtod(c.required.c_str(), nullptr);
  c.met = std::isfinite(a) && std::isfinite(r) && op_holds(three_way(a, r), c.op);
  return c;
}

static std::string value_text(const Comparison& c, const std::string& v) {
  if (c.kind != "bytes") return v;
  uint64_t b = std::strtoull(v.c_str(), nullptr, 10);
  return format_bytes(b) + " (" + v + " bytes)";
}

std::string comparison_text(const Comparison& c) {
  return c.what + ": " + value_text(c, c.actual) + " " + c.op + " " + value_text(c, c.required) +
         (c.met ? " (requirement met)" : " (requirement NOT met)");
}

bool add_comparison(Finding* f, Comparison c) {
  f->evidence.push_back(comparison_text(c));
  bool met = c.met;
  f->comparisons.push_back(std::move(c));
  return met;
}

void add_not_compared(Finding* f, const std::string& what, const std::string& missing) {
  f->evidence.push_back("not compared: " + what + " (" + missing + " unknown)");
}

bool all_met(const std::vector<Comparison>& cs) {
  for (const auto& c : cs) {
    if (!c.met) return false;
  }
  return true;
}

}  // namespace gd
